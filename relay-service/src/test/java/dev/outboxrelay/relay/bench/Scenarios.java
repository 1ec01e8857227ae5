package dev.outboxrelay.relay.bench;

import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import dev.outboxrelay.outbox.testing.KafkaBroker;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.KafkaSink;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkResult;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.AgroalDataSourceMetrics;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The scenarios. Each prints its lines through the {@link BenchReport}; results later scenarios
 * compare against (sql-limit, the one-relay drain, latency on an empty table) are kept and measured
 * on demand when an earlier scenario was skipped ({@code --only}).
 */
final class Scenarios {
  static final int[] SQL_BATCHES = {1, 10, 100};
  static final int[] RATES = {200, 1_000, 5_000};
  static final int TARGET_RATE = 1_000;
  static final int ORDERING_KEYS = 1_000;
  static final int MULTI_RELAYS = 3;
  static final int PRODUCER_THREADS = 8;
  static final int ENQUEUE_CLIENTS = 4;
  static final double MAX_RSS_MB = 300;

  /** Three relays share the cores with the database: at least this share of one relay's drain. */
  static final double MULTI_RELAY_RATIO = 0.9;

  /** New relay JVMs are warm when their JIT compilers use less than this share of their CPU. */
  static final double JIT_SETTLED_SHARE = 0.1;

  /** Targets at {@value #TARGET_RATE} jobs/s. */
  static final double TARGET_P50_MS = 3;

  static final double TARGET_P99_MS = 20;

  /** The rate the relay must sustain (achieved by the producer within 5%, every job delivered). */
  static final int SUSTAINED_RATE = 5_000;

  static final double MAX_IDLE_CLAIMS_PER_S = 1;

  /** ordered-hot's EXPLAIN: a backlog of this many keys times this many jobs. */
  static final int EXPLAIN_KEYS = 100;

  static final int EXPLAIN_JOBS_PER_KEY = 500;

  private final BenchDatabase db;
  private final Bench.Sizes sizes;
  private final BenchReport report;
  private final RelayConfig.Relay relayConfig = InProcessRelay.config().relay();
  private final Path childDir = Path.of("target", "bench").toAbsolutePath();
  private int tags;
  private Double sqlLimit;
  private DrainResult drainOne;
  private LatencyResult latencyEmpty;
  private boolean relayWarm;
  private boolean keyedWarm;

  /** db-scheduler's drain, when {@code peer} ran in this run. */
  private PeerScheduler.Result peer;

  Scenarios(BenchDatabase db, Bench.Sizes sizes, BenchReport report) {
    this.db = db;
    this.sizes = sizes;
    this.report = report;
  }

  void header(boolean quick) {
    report
        .line("config")
        .put("db", db.kind())
        .put("quick", quick)
        .put("cores", Runtime.getRuntime().availableProcessors())
        .put("batch", relayConfig.batchSize())
        .put("concurrency", relayConfig.concurrency())
        .put("lease", relayConfig.leaseDuration().toMillis() + "ms")
        .put(
            "idle",
            relayConfig.idleMinWait().toMillis()
                + "ms.."
                + relayConfig.idleMaxWait().toMillis()
                + "ms")
        .put("listen_notify", relayConfig.listenNotify() && "postgresql".equals(db.kind()))
        .put("pool_max", BenchDatabase.RELAY_POOL_MAX_SIZE)
        .put("sink", "in-process-noop")
        .put("warmup_jobs", sizes.warmupJobs())
        .put("java", System.getProperty("java.version"))
        .print();
  }

  void run(String name) throws Exception {
    switch (name) {
      case "sql-limit" -> measureSqlLimit();
      case "peer" -> peer();
      case "drain" -> drain();
      case "drain-http" -> drainHttp();
      case "drain-kafka" -> drainKafka();
      case "latency" -> latency();
      case "enqueue-overhead" -> enqueueOverhead();
      case "history" -> history();
      case "ordered" -> ordered();
      case "ordered-hot" -> orderedHot();
      case "seed004" -> seed004();
      case "idle" -> idle();
      default -> throw new IllegalArgumentException(name);
    }
  }

  private String tag() {
    return "b" + (++tags);
  }

  // ---- 1. sql-limit ----------------------------------------------------------------------------

  private record Claimed(long id, UUID token, int attemptNo) {}

  /**
   * The store's own statements with nothing around them: one claim ({@code
   * JdbcOutboxStore.claimOn}), then the batch's completion transaction as {@code markDeliveredAll}
   * runs it (the token-checked batched update and the attempt rows, one batched insert), on one
   * held connection per client, no pool, no threads handing work over. Twice: with as many clients
   * as cores, and with as many as the relay has workers (a commit waits for its WAL flush, and
   * concurrent commits share one). The best of all runs is the anchor.
   */
  private void measureSqlLimit() throws Exception {
    JdbcOutboxStore store = JdbcOutboxStore.create(db.plain());
    double best = 0;
    int bestBatch = 0;
    int bestClients = 0;
    List<int[]> runs = new ArrayList<>();
    for (int clients :
        new int[] {Runtime.getRuntime().availableProcessors(), relayConfig.concurrency()}) {
      for (int batch : SQL_BATCHES) {
        runs.add(new int[] {clients, batch});
      }
    }
    for (int[] run : runs) {
      int clients = run[0];
      int batch = run[1];
      db.truncate();
      db.fillReady(tag(), sizes.sqlJobs(), 0);
      AtomicLong done = new AtomicLong();
      long deadline = System.nanoTime() + sizes.sqlCap().toNanos();
      List<Thread> threads = new ArrayList<>();
      List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
      long t0 = System.nanoTime();
      for (int i = 0; i < clients; i++) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    sqlLoop(store, batch, deadline, done);
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                },
                "bench-sql-" + i);
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (!errors.isEmpty()) {
        throw new IllegalStateException("sql-limit loop failed: " + errors.get(0), errors.get(0));
      }
      double rate = done.get() / seconds;
      if (rate > best) {
        best = rate;
        bestBatch = batch;
        bestClients = clients;
      }
      report
          .line("sql-limit")
          .put("batch", batch)
          .put("clients", clients)
          .put("jobs", done.get())
          .put("seconds", seconds)
          .put("jobs_per_s", rate)
          .put("transactions_per_job", 2.0 / batch)
          .print();
    }
    report
        .line("sql-limit")
        .put("best_batch", bestBatch)
        .put("best_clients", bestClients)
        .put("best_jobs_per_s", best)
        .print();
    sqlLimit = best;
  }

  private void sqlLoop(JdbcOutboxStore store, int batch, long deadline, AtomicLong done)
      throws SQLException {
    TypeBinding binding = store.dialect().binding();
    String attempt = store.dialect().jobs(store.tables()).insertAttemptSql();
    try (Connection c = db.plain().getConnection()) {
      while (System.nanoTime() < deadline) {
        List<Claimed> rows =
            store.claimOn(c, ClaimRequest.of(batch, relayConfig.leaseDuration())).stream()
                .map(m -> new Claimed(m.id(), m.claimToken(), m.attemptNo()))
                .toList();
        if (rows.isEmpty()) {
          return;
        }
        JdbcTransactions.inTransaction(
            c,
            tx -> {
              List<Long> completed =
                  store.markDeliveredOn(
                      tx,
                      rows.stream().map(Claimed::id).toList(),
                      rows.stream().map(Claimed::token).toList());
              if (completed.size() != rows.size()) {
                throw new IllegalStateException(
                    "completed " + completed.size() + " of " + rows.size() + " jobs just claimed");
              }
              try (PreparedStatement ps = tx.prepareStatement(attempt)) {
                for (Claimed r : rows) {
                  ps.setLong(1, r.id());
                  ps.setInt(2, r.attemptNo());
                  binding.bindUuid(ps, 3, r.token());
                  binding.bindInstant(ps, 4, null);
                  ps.setLong(5, 0);
                  ps.setString(6, AttemptOutcome.DELIVERED.name());
                  ps.setString(7, null);
                  ps.setString(8, null);
                  ps.setString(9, "bench no-op");
                  ps.setString(10, "bench");
                  ps.addBatch();
                }
                ps.executeBatch();
              }
              return null;
            });
        done.addAndGet(rows.size());
      }
    }
  }

  private double sqlLimitRate() throws Exception {
    if (sqlLimit == null) {
      measureSqlLimit();
    }
    return sqlLimit;
  }

  // ---- 2. drain --------------------------------------------------------------------------------

  /** One drain by one in-process relay. */
  record DrainResult(
      int jobs,
      long sent,
      double seconds,
      double jobsPerS,
      boolean drained,
      int claims,
      long duplicates,
      long orderViolations,
      double poolWaitAvgMs,
      double poolWaitMaxMs,
      long poolMaxUsed,
      double txPerJob,
      double relayCpuCores,
      double jitCores,
      double hostCpuCores,
      String indexScans) {}

  private void drain() throws Exception {
    double limit = sqlLimitRate();
    DrainResult one = drainInProcess(sizes.drainJobs(), 0, true);
    drainOne = one;
    BenchReport.Line line =
        drainLine("drain", one, limit).put("ratio_to_sql_limit", one.jobsPerS() / limit);
    if (peer != null) {
      line.put("peer_jobs_per_s", peer.jobsPerS())
          .put("ratio_to_peer", one.jobsPerS() / peer.jobsPerS());
    }
    line.target("ratio_to_sql_limit>=0.7", one.jobsPerS() >= 0.7 * limit).print();
    if (peer != null) {
      double ratio = one.jobsPerS() / peer.jobsPerS();
      report
          .line("drain")
          .put("relays", 1)
          .put("versus", "peer")
          .put("jobs_per_s", one.jobsPerS())
          .put("peer_jobs_per_s", peer.jobsPerS())
          .put("ratio_to_peer", ratio)
          .target("ratio_to_peer>=1.5", ratio >= 1.5)
          .print();
    }
    drainMulti(limit, one);
  }

  private DrainResult drainOne() throws Exception {
    if (drainOne == null) {
      drainOne = drainInProcess(sizes.drainJobs(), 0, true);
      drainLine("drain", drainOne, sqlLimitRate()).put("baseline_for", "ratios").print();
    }
    return drainOne;
  }

  private BenchReport.Line drainLine(String scenario, DrainResult r, double limit) {
    return report
        .line(scenario)
        .put("relays", 1)
        .put("jobs", r.jobs())
        .put("sent", r.sent())
        .put("drained", r.drained())
        .put("seconds", r.seconds())
        .put("jobs_per_s", r.jobsPerS())
        .put("claims", r.claims())
        .put("jobs_per_claim", r.sent() / Math.max(1.0, r.claims()))
        .put("duplicates", r.duplicates())
        .put("pool_wait_avg_ms", r.poolWaitAvgMs())
        .put("pool_wait_max_ms", r.poolWaitMaxMs())
        .put("pool_max_used", r.poolMaxUsed())
        .put("db_tx_per_job", r.txPerJob())
        .put("relay_cpu_cores", r.relayCpuCores())
        .put("jit_cores", r.jitCores())
        .put("host_cpu_cores", r.hostCpuCores())
        .put("index_scans", r.indexScans())
        .put("sql_limit_jobs_per_s", limit);
  }

  /**
   * Fills {@code jobs} ready jobs (on an emptied table when {@code fresh}, else on what is there)
   * and lets one in-process relay drain them; the clock runs from the relay's start until the
   * database holds no ready or leased job. Fails on a duplicate or a lost job.
   */
  DrainResult drainInProcess(int jobs, int keys, boolean fresh) throws Exception {
    return drainInProcess(jobs, keys, fresh, recording -> recording);
  }

  /**
   * The drain through the sink {@code sinkUnderTest} builds around the {@link RecordingSink} (which
   * must see each job the real sink delivered, once).
   */
  DrainResult drainInProcess(
      int jobs,
      int keys,
      boolean fresh,
      java.util.function.Function<RecordingSink, MessageSink> sinkUnderTest)
      throws Exception {
    if (!relayWarm) {
      relayWarm = true;
      warmUpHere(
          report.line("drain").put("relays", 1), () -> drainInProcess(sizes.warmupJobs(), 0, true));
    }
    if (fresh) {
      db.truncate();
    }
    long sentBefore = db.count("SELECT COUNT(*) FROM outbox_message WHERE state = 'S'");
    db.fillReady(tag(), jobs, keys);
    RecordingSink sink = new RecordingSink();
    MessageSink relaySink = sinkUnderTest.apply(sink);
    long pid = ProcessHandle.current().pid();
    Map<String, Long> scansBefore = indexScans();
    long tx0 = db.committedTransactions();
    double cpu0 = HostStats.cpuSeconds(pid);
    double jit0 = HostStats.jitCpuSeconds();
    double host0 = HostStats.hostBusySeconds();
    InProcessRelay relay = new InProcessRelay(db.url(), db.user(), relaySink);
    long t0 = System.nanoTime();
    long deadline = t0 + sizes.drainCap().toNanos();
    relay.start();
    while (sink.distinct() < jobs && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    while (db.anyUnfinished() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double cpu = HostStats.cpuSeconds(pid) - cpu0;
    double jit = HostStats.jitCpuSeconds() - jit0;
    double host = HostStats.hostBusySeconds() - host0;
    relay.stop();
    AgroalDataSourceMetrics pool = relay.poolMetrics();
    double waitAvg = pool.blockingTimeAverage().toNanos() / 1e6;
    double waitMax = pool.blockingTimeMax().toNanos() / 1e6;
    long maxUsed = pool.maxUsedCount();
    int claims = relay.claimStatements();
    relay.close();
    long tx = db.committedTransactions() - tx0;
    long sent = db.count("SELECT COUNT(*) FROM outbox_message WHERE state = 'S'") - sentBefore;
    boolean drained = sent == jobs;
    if (sink.duplicates() > 0) {
      throw new IllegalStateException(sink.duplicates() + " job(s) received twice by one relay");
    }
    if (drained && sink.distinct() != jobs) {
      throw new IllegalStateException(
          "jobs lost: " + jobs + " filled, " + sink.distinct() + " received");
    }
    if (sink.orderViolations() > 0) {
      throw new IllegalStateException(
          sink.orderViolations() + " job(s) arrived before an earlier job of their key");
    }
    return new DrainResult(
        jobs,
        sent,
        seconds,
        sent / seconds,
        drained,
        claims,
        sink.duplicates(),
        sink.orderViolations(),
        waitAvg,
        waitMax,
        maxUsed,
        tx0 < 0 ? Double.NaN : (double) tx / Math.max(1, sent),
        cpu / seconds,
        jit / seconds,
        host / seconds,
        indexScanDelta(scansBefore));
  }

  /** PostgreSQL: index scans per index of outbox_message so far (the claim plan, as it ran). */
  private Map<String, Long> indexScans() {
    Map<String, Long> scans = new TreeMap<>();
    if (!db.postgres()) {
      return scans;
    }
    try (Connection c = db.plain().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE schemaname = current_schema()"
                    + " AND relname = 'outbox_message'");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        scans.put(rs.getString(1), rs.getLong(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("reading index statistics failed", e);
    }
    return scans;
  }

  private String indexScanDelta(Map<String, Long> before) throws InterruptedException {
    if (!db.postgres()) {
      return "n/a";
    }
    Thread.sleep(300); // closed backends flush their statistics on exit, asynchronously
    StringBuilder b = new StringBuilder();
    indexScans()
        .forEach(
            (index, n) -> {
              long d = n - before.getOrDefault(index, 0L);
              if (d > 0) {
                b.append(b.length() == 0 ? "" : ",")
                    .append(index.replace("ix_outbox_message_", ""))
                    .append(':')
                    .append(d);
              }
            });
    return b.length() == 0 ? "none" : b.toString();
  }

  /**
   * Claims, CPU and the JIT compilers' CPU so far: of the relay children ({@code STATS} and {@code
   * /proc}) or of this JVM (no claims).
   */
  private record CpuUse(long claims, double seconds, double jitSeconds) {
    static CpuUse ofChildren(List<ChildRelay> children) throws Exception {
      long claims = 0;
      double seconds = 0;
      double jit = 0;
      for (ChildRelay c : children) {
        c.send("STATS");
        String stats = c.await("STATS", Duration.ofSeconds(30));
        claims += (long) ChildRelay.field(stats, "claims");
        jit += ChildRelay.field(stats, "jit_cpu_s");
        seconds += HostStats.cpuSeconds(c.pid());
      }
      return new CpuUse(claims, seconds, jit);
    }

    static CpuUse ofThisJvm() {
      return new CpuUse(
          0, HostStats.cpuSeconds(ProcessHandle.current().pid()), HostStats.jitCpuSeconds());
    }

    CpuUse minus(CpuUse earlier) {
      return new CpuUse(
          claims - earlier.claims, seconds - earlier.seconds, jitSeconds - earlier.jitSeconds);
    }
  }

  /** What a warm-up drained before the measured drain, and the JIT's share of its last round. */
  private record WarmUp(int rounds, long jobs, double jitShare) {}

  /**
   * Warms code before a measured drain: {@code round} (an unmeasured drain of {@code warmupJobs})
   * again until the JIT compilers took less than {@value #JIT_SETTLED_SHARE} of the CPU {@code
   * reading} reads over one, or {@code maxWarmupRounds}, or the deadline; then a {@code
   * measure=warmup} line of {@code line}. One round was not enough: three new relay JVMs sharing
   * two cores with the database spent most of a 20,000-job round, and of the measured drain after
   * it, compiling.
   */
  private WarmUp warmUp(
      BenchReport.Line line,
      java.util.concurrent.Callable<CpuUse> reading,
      java.util.concurrent.Callable<?> round,
      long deadline)
      throws Exception {
    double share = Double.NaN;
    int rounds = 0;
    while (rounds < sizes.maxWarmupRounds() && System.nanoTime() < deadline) {
      CpuUse before = reading.call();
      round.call();
      rounds++;
      CpuUse used = reading.call().minus(before);
      share = used.jitSeconds() / Math.max(0.01, used.seconds());
      if (share < JIT_SETTLED_SHARE) {
        break;
      }
    }
    WarmUp warm = new WarmUp(rounds, (long) rounds * sizes.warmupJobs(), share);
    line.put("measure", "warmup")
        .put("rounds", warm.rounds())
        .put("warmup_jobs", warm.jobs())
        .put("jit_share", warm.jitShare())
        .put("settled", warm.jitShare() < JIT_SETTLED_SHARE)
        .print();
    return warm;
  }

  /** {@link #warmUp} of code in this JVM (a drain has its own time cap). */
  private void warmUpHere(BenchReport.Line line, java.util.concurrent.Callable<?> round)
      throws Exception {
    warmUp(line, CpuUse::ofThisJvm, round, Long.MAX_VALUE);
  }

  /**
   * Three relays in their own JVMs on one backlog: throughput, duplicates across processes, memory.
   */
  private void drainMulti(double limit, DrainResult one) throws Exception {
    int jobs = sizes.drainJobs();
    db.truncate();
    List<ChildRelay> children = new ArrayList<>();
    try {
      for (int i = 1; i <= MULTI_RELAYS; i++) {
        children.add(ChildRelay.launch("drain-relay-" + i, db.childUrl(), db.user(), childDir));
      }
      for (ChildRelay c : children) {
        c.await("READY", Duration.ofSeconds(90));
      }
      for (ChildRelay c : children) {
        c.send("GO");
      }
      long warmupDeadline = System.nanoTime() + sizes.drainCap().toNanos();
      WarmUp warm =
          warmUp(
              report.line("drain").put("relays", MULTI_RELAYS),
              () -> CpuUse.ofChildren(children),
              () -> {
                db.fillReady(tag(), sizes.warmupJobs(), 0);
                while (db.anyUnfinished() && System.nanoTime() < warmupDeadline) {
                  Thread.sleep(10);
                }
                return null;
              },
              warmupDeadline);
      long lastWarmupId = db.count("SELECT COALESCE(MAX(id), 0) FROM outbox_message");
      long warmupSent = db.count("SELECT COUNT(*) FROM outbox_message WHERE state = 'S'");
      // The measured drain starts on an empty table, as one relay's does (ids go on counting).
      db.truncate();
      CpuUse cpu0 = CpuUse.ofChildren(children);
      // One INSERT ... SELECT: the relays see the measured jobs at its commit (and are woken by
      // it).
      db.fillReady(tag(), jobs, 0);
      long tx0 = db.committedTransactions();
      double host0 = HostStats.hostBusySeconds();
      long t0 = System.nanoTime();
      long deadline = t0 + sizes.drainCap().toNanos();
      String measuredSent = "SELECT COUNT(*) FROM outbox_message WHERE state = 'S'";
      long sentAtStart = db.count(measuredSent);
      while (db.anyUnfinished() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      double host = HostStats.hostBusySeconds() - host0;
      long tx = db.committedTransactions() - tx0;
      CpuUse cpu = CpuUse.ofChildren(children).minus(cpu0);
      double rssPeak = 0;
      double heapPeak = 0;
      long claims = cpu.claims();
      Map<Long, Integer> received = new HashMap<>();
      for (ChildRelay c : children) {
        rssPeak = Math.max(rssPeak, HostStats.peakRssMb(c.pid()));
        c.send("STOP");
        String stopped = c.await("STOPPED", Duration.ofSeconds(60));
        heapPeak = Math.max(heapPeak, ChildRelay.field(stopped, "heap_used_peak_mb"));
        for (long id : c.receivedIds()) {
          received.merge(id, 1, Integer::sum);
        }
      }
      long duplicates = received.values().stream().mapToLong(n -> n - 1).sum();
      long sent = db.count(measuredSent);
      long delivered = db.count("SELECT COUNT(*) FROM outbox_attempt WHERE outcome = 'DELIVERED'");
      // At the time cap the relays release what they hold: jobs still R are late, not lost; a job
      // is lost when it is S but no relay's sink received it (warm-up jobs included).
      long lost = sent + warmupSent - received.size();
      boolean drained = sent == jobs && warmupSent == warm.jobs();
      // Measured jobs sent between the fill's commit and the first count are not in the rate.
      double rate = (sent - sentAtStart) / seconds;
      report
          .line("drain")
          .put("relays", MULTI_RELAYS)
          .put("jobs", jobs)
          .put("warmup_jobs", warm.jobs())
          .put("sent", sent)
          .put("drained", drained)
          .put("seconds", seconds)
          .put("jobs_per_s", rate)
          .put("claims", claims)
          .put("duplicates", duplicates)
          .put("lost", lost)
          .put("delivered_attempts", delivered)
          .put("db_tx_per_job", tx0 < 0 ? Double.NaN : (double) tx / Math.max(1, sent))
          .put("host_cpu_cores", host / seconds)
          .put("relay_cpu_cores", cpu.seconds() / seconds)
          .put("jit_cores", cpu.jitSeconds() / seconds)
          .put("ratio_to_sql_limit", rate / limit)
          .put("ratio_to_1_relay", rate / one.jobsPerS())
          .target(
              "ratio_to_1_relay>=" + MULTI_RELAY_RATIO, rate >= MULTI_RELAY_RATIO * one.jobsPerS())
          .print();
      report
          .line("drain")
          .put("relays", MULTI_RELAYS)
          .put("measure", "memory")
          .put("rss_peak_mb", rssPeak)
          .put("heap_used_peak_mb", heapPeak)
          .put("xmx", ChildRelay.HEAP)
          .target("rss_peak_mb<=" + (int) MAX_RSS_MB, rssPeak > 0 && rssPeak <= MAX_RSS_MB)
          .print();
      if (duplicates > 0 || lost != 0 || delivered != sent) {
        throw new IllegalStateException(
            "3 relays: duplicates="
                + duplicates
                + " lost="
                + lost
                + " sent="
                + sent
                + " delivered_attempts="
                + delivered
                + " of "
                + jobs
                + " jobs");
      }
    } finally {
      for (ChildRelay c : children) {
        c.close();
      }
    }
  }

  // ---- peer, drain-http, drain-kafka ------------------------------------------------------------

  /**
   * db-scheduler (lock-and-fetch, {@value PeerScheduler#THREADS} threads) on as many one-time no-op
   * tasks as the drain has jobs, on the same database; {@code drain} reports its ratio to it.
   */
  private void peer() throws Exception {
    if (!db.postgres()) {
      report.line("peer").put("skipped", "postgresql_only").print();
      return;
    }
    warmUpHere(
        report.line("peer"), () -> PeerScheduler.drain(db, sizes.warmupJobs(), sizes.drainCap()));
    PeerScheduler.Result r = PeerScheduler.drain(db, sizes.drainJobs(), sizes.drainCap());
    report
        .line("peer")
        .put("scheduler", "db-scheduler-16.12.0")
        .put(
            "poll",
            "lock-and-fetch(" + PeerScheduler.LOWER_LIMIT + "," + PeerScheduler.UPPER_LIMIT + ")")
        .put("threads", PeerScheduler.THREADS)
        .put("pool_max", BenchDatabase.RELAY_POOL_MAX_SIZE)
        .put("jobs", r.tasks())
        .put("executions", r.executions())
        .put("duplicates", r.duplicates())
        .put("missed", r.missed())
        .put("left", r.left())
        .put("seconds", r.seconds())
        .put("jobs_per_s", r.jobsPerS())
        .put("host_cpu_cores", r.hostCpuCores())
        .print();
    if (r.duplicates() > 0 || r.missed() > 0 || r.left() > 0) {
      throw new IllegalStateException(
          "peer: "
              + r.duplicates()
              + " task(s) ran twice, "
              + r.missed()
              + " never ran, "
              + r.left()
              + " left in scheduled_tasks, of "
              + r.tasks());
    }
    peer = r;
  }

  /** The real sink, then the recording of what it delivered (so duplicates count deliveries). */
  private static MessageSink recordingAfter(MessageSink real, RecordingSink recording) {
    return m ->
        real.deliver(m)
            .thenApply(
                r -> {
                  if (r instanceof SinkResult.Delivered) {
                    recording.record(m);
                  }
                  return r;
                });
  }

  /**
   * Warms the code of {@code sink} (its client library, a connection pool) as {@code drain} warmed
   * the relay's, so that the ratio to {@code drain} compares warm code with warm code.
   */
  private void warmUpSink(String scenario, MessageSink sink) throws Exception {
    warmUpHere(
        report.line(scenario),
        () ->
            drainInProcess(
                sizes.warmupJobs(), 0, true, recording -> recordingAfter(sink, recording)));
  }

  /**
   * The drain through the relay's HTTP sink to a receiver on loopback in this JVM that answers 200
   * at once on kept-alive connections (one event-loop thread); the sink has a destination's default
   * timeouts (connect 2s, request 10s). {@code relay_cpu_cores} is this JVM's, the receiver's share
   * ({@code receiver_cpu_cores}, its thread) included; {@code relay_cpu_us_per_job} leaves it out.
   */
  private void drainHttp() throws Exception {
    double limit = sqlLimitRate();
    DrainResult base = drainOne();
    int jobs = sizes.drainJobs();
    try (LoopbackReceiver receiver = new LoopbackReceiver()) {
      HttpSink http = new HttpSink(receiver.uri(), Duration.ofSeconds(2), Duration.ofSeconds(10));
      warmUpSink("drain-http", http);
      long requests0 = receiver.requests();
      int distinct0 = receiver.distinctMessages();
      double receiverCpu0 = HostStats.threadCpuSeconds(LoopbackReceiver.EVENT_LOOP_THREAD);
      DrainResult r = drainInProcess(jobs, 0, true, recording -> recordingAfter(http, recording));
      double receiverCores =
          (HostStats.threadCpuSeconds(LoopbackReceiver.EVENT_LOOP_THREAD) - receiverCpu0)
              / r.seconds();
      long requests = receiver.requests() - requests0;
      int distinct = receiver.distinctMessages() - distinct0;
      double ratio = r.jobsPerS() / base.jobsPerS();
      drainLine("drain-http", r, limit)
          .put("sink", "http-loopback")
          .put("requests", requests)
          .put("distinct_messages", distinct)
          .put("connections", receiver.connections())
          .put("receiver", "vertx-1-event-loop")
          .put("receiver_cpu_cores", receiverCores)
          .put("relay_cpu_us_per_job", (r.relayCpuCores() - receiverCores) * 1e6 / r.jobsPerS())
          .put("drain_relay_cpu_us_per_job", base.relayCpuCores() * 1e6 / base.jobsPerS())
          .put("drain_jobs_per_s", base.jobsPerS())
          .put("ratio_to_drain", ratio)
          .target("ratio_to_drain>=0.3", ratio >= 0.3)
          .print();
      if (requests != distinct || (r.drained() && distinct != jobs)) {
        throw new IllegalStateException(
            "drain-http: "
                + requests
                + " requests for "
                + distinct
                + " distinct messages of "
                + jobs
                + " jobs");
      }
    }
  }

  /**
   * The drain through the relay's Kafka sink to a single-node KRaft broker started as the tests
   * start one, with the producer settings of application.properties (acks=all, idempotent).
   * Afterwards the topic must hold exactly one record per job (its end offsets).
   */
  private void drainKafka() throws Exception {
    double limit = sqlLimitRate();
    DrainResult base = drainOne();
    int jobs = sizes.drainJobs();
    String topic = "bench-drain-" + ProcessHandle.current().pid();
    try (KafkaBroker broker = KafkaBroker.startFresh(childDir.resolve("kafka"))) {
      broker.createTopic(topic);
      Map<String, Object> settings = kafkaProducerSettings(broker.bootstrapServers());
      try (org.apache.kafka.clients.producer.KafkaProducer<String, String> producer =
          new org.apache.kafka.clients.producer.KafkaProducer<>(settings)) {
        Duration verdictWithin =
            Duration.ofMillis(
                Long.parseLong(String.valueOf(settings.getOrDefault("max.block.ms", "60000")))
                    + Long.parseLong(
                        String.valueOf(settings.getOrDefault("delivery.timeout.ms", "120000"))));
        KafkaSink kafka =
            new KafkaSink(topic, Duration.ofSeconds(10), verdictWithin, producer::send);
        warmUpSink("drain-kafka", kafka);
        long records0 = recordsIn(broker.bootstrapServers(), topic);
        DrainResult r =
            drainInProcess(jobs, 0, true, recording -> recordingAfter(kafka, recording));
        long records = recordsIn(broker.bootstrapServers(), topic) - records0;
        double ratio = r.jobsPerS() / base.jobsPerS();
        drainLine("drain-kafka", r, limit)
            .put("sink", "kafka-kraft-1-node")
            .put("acks", settings.get("acks"))
            .put("idempotence", settings.get("enable.idempotence"))
            .put("linger_ms", settings.getOrDefault("linger.ms", "default"))
            .put("records_in_topic", records)
            .put("relay_cpu_us_per_job", r.relayCpuCores() * 1e6 / r.jobsPerS())
            .put("drain_relay_cpu_us_per_job", base.relayCpuCores() * 1e6 / base.jobsPerS())
            .put("drain_jobs_per_s", base.jobsPerS())
            .put("ratio_to_drain", ratio)
            .target("ratio_to_drain>=0.5", ratio >= 0.5)
            .print();
        if (records != r.sent()) {
          throw new IllegalStateException(
              "drain-kafka: " + records + " records in the topic for " + r.sent() + " jobs sent");
        }
      }
    }
  }

  /**
   * The relay's producer settings as application.properties gives them (the keys under {@link
   * dev.outboxrelay.relay.sink.KafkaChannel#PREFIX} that are producer settings), to {@code
   * bootstrap}.
   */
  private static Map<String, Object> kafkaProducerSettings(String bootstrap)
      throws java.io.IOException {
    java.util.Properties app = new java.util.Properties();
    try (var in = Scenarios.class.getClassLoader().getResourceAsStream("application.properties")) {
      if (in == null) {
        throw new IllegalStateException("application.properties is not on the classpath");
      }
      app.load(in);
    }
    String prefix = dev.outboxrelay.relay.sink.KafkaChannel.PREFIX;
    Map<String, Object> settings = new HashMap<>();
    for (String name : app.stringPropertyNames()) {
      if (name.startsWith(prefix)
          && org.apache.kafka.clients.producer.ProducerConfig.configNames()
              .contains(name.substring(prefix.length()))) {
        settings.put(name.substring(prefix.length()), app.getProperty(name));
      }
    }
    settings.put("bootstrap.servers", bootstrap);
    settings.put(
        "key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
    settings.put(
        "value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
    settings.put("client.id", "bench-relay");
    return settings;
  }

  /** Records written to {@code topic}: the sum of its partitions' end offsets. */
  private static long recordsIn(String bootstrap, String topic) {
    Map<String, Object> c = new HashMap<>();
    c.put("bootstrap.servers", bootstrap);
    c.put(
        "key.deserializer",
        org.apache.kafka.common.serialization.StringDeserializer.class.getName());
    c.put(
        "value.deserializer",
        org.apache.kafka.common.serialization.StringDeserializer.class.getName());
    try (org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(c)) {
      List<org.apache.kafka.common.TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition()))
              .toList();
      return consumer.endOffsets(partitions, Duration.ofSeconds(30)).values().stream()
          .mapToLong(Long::longValue)
          .sum();
    }
  }

  // ---- 3. latency ------------------------------------------------------------------------------

  /**
   * {@code late}: jobs not received when the measurement ended; the percentiles are then lower
   * bounds.
   */
  record LatencyResult(
      int rate, double achievedRate, int produced, LatencySummary summary, long behind, int late) {}

  private void latency() throws Exception {
    for (int rate : RATES) {
      LatencyResult r = measureLatency(rate, true);
      BenchReport.Line line = latencyLine("latency", r);
      if (rate == TARGET_RATE) {
        latencyEmpty = r;
        line.target(
            "p50<=" + (int) TARGET_P50_MS + "ms,p99<=" + (int) TARGET_P99_MS + "ms",
            r.summary().p50Ms() <= TARGET_P50_MS && r.summary().p99Ms() <= TARGET_P99_MS);
      } else if (rate == SUSTAINED_RATE) {
        line.target("sustained_at_" + SUSTAINED_RATE, sustained(r));
      }
      line.print();
    }
  }

  private LatencyResult latencyEmpty() throws Exception {
    if (latencyEmpty == null) {
      latencyEmpty = measureLatency(TARGET_RATE, true);
      latencyLine("latency", latencyEmpty).put("baseline_for", "ratios").print();
    }
    return latencyEmpty;
  }

  /** The producer reached 95% of the rate and every job was delivered within the measurement. */
  private static boolean sustained(LatencyResult r) {
    return r.achievedRate() >= 0.95 * r.rate() && r.late() == 0;
  }

  private BenchReport.Line latencyLine(String scenario, LatencyResult r) {
    LatencySummary s = r.summary();
    return report
        .line(scenario)
        .put("rate", r.rate())
        .put("achieved_rate", r.achievedRate())
        .put("sustained", sustained(r))
        .put("jobs", r.produced())
        .put("late", r.late())
        .put("p50_ms", s.p50Ms())
        .put("p95_ms", s.p95Ms())
        .put("p99_ms", s.p99Ms())
        .put("max_ms", s.maxMs())
        .put("lower_bounds", r.late() > 0);
  }

  /**
   * A producer commits one job per transaction at {@code rate} per second ({@value
   * #PRODUCER_THREADS} threads on their own pool, each job due at its slot of the schedule) while
   * one in-process relay delivers; latency is commit (after {@code commit()} returned) to the
   * sink's receipt, so it is never understated by the producer's own wait.
   */
  LatencyResult measureLatency(int rate, boolean fresh) throws Exception {
    if (fresh) {
      db.truncate();
    }
    int total = (int) (rate * sizes.latencyRun().toMillis() / 1000);
    RecordingSink sink = new RecordingSink();
    Outbox outbox =
        new Outbox(OutboxConfig.builder().destinations(BenchDatabase.DESTINATION).build());
    Map<Long, Long> committed = new ConcurrentHashMap<>();
    AtomicInteger next = new AtomicInteger();
    AtomicLong behind = new AtomicLong();
    AtomicLong lastCommit = new AtomicLong();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    String tag = tag();
    try (InProcessRelay relay = new InProcessRelay(db.url(), db.user(), sink);
        AgroalDataSource producerPool = db.pool(PRODUCER_THREADS)) {
      relay.start();
      long start = System.nanoTime() + 100_000_000L;
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < PRODUCER_THREADS; t++) {
        Thread th =
            new Thread(
                () -> {
                  try {
                    int i;
                    while ((i = next.getAndIncrement()) < total) {
                      long due = start + (long) i * 1_000_000_000L / rate;
                      long wait = due - System.nanoTime();
                      if (wait > 0) {
                        LockSupport.parkNanos(wait);
                      } else if (-wait > 100_000_000L) {
                        behind.incrementAndGet();
                      }
                      try (Connection c = producerPool.getConnection()) {
                        c.setAutoCommit(false);
                        EnqueueResult r =
                            outbox.enqueue(
                                c,
                                OutboxMessage.builder()
                                    .operationId(tag + "-" + i)
                                    .destination(BenchDatabase.DESTINATION)
                                    .payload("{\"n\":" + i + "}")
                                    .build());
                        c.commit();
                        long now = System.nanoTime();
                        committed.put(r.messageId(), now);
                        lastCommit.accumulateAndGet(now, Math::max);
                      }
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                },
                "bench-producer-" + t);
        threads.add(th);
        th.start();
      }
      for (Thread th : threads) {
        th.join();
      }
      if (!errors.isEmpty()) {
        throw new IllegalStateException("producer failed: " + errors.get(0), errors.get(0));
      }
      double achieved = total / ((lastCommit.get() - start) / 1e9);
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (sink.distinct() < total && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      long measuredUntil = System.nanoTime();
      relay.stop();
      // A duplicate breaks the promise and fails the run. A job not received 60 s after the
      // producer stopped is late, not lost (it stays R in the table): it is reported, and its
      // latency counts as at least the time it had waited, so the percentiles are lower bounds.
      if (sink.duplicates() > 0) {
        throw new IllegalStateException(
            "latency at " + rate + "/s: " + sink.duplicates() + " duplicates");
      }
      long[] nanos = new long[total];
      int k = 0;
      int late = 0;
      for (Map.Entry<Long, Long> e : committed.entrySet()) {
        Long received = sink.receivedAt(e.getKey());
        if (received == null) {
          late++;
        }
        nanos[k++] = Math.max(0, (received == null ? measuredUntil : received) - e.getValue());
      }
      return new LatencyResult(rate, achieved, total, LatencySummary.of(nanos), behind.get(), late);
    }
  }

  // ---- 4. enqueue-overhead ---------------------------------------------------------------------

  private record TxRun(double txPerS, LatencySummary latency) {}

  /** What a business transaction writes after its own row, on its connection, before the commit. */
  @FunctionalInterface
  private interface SecondWrite {
    void write(Connection c, long i) throws SQLException;
  }

  /**
   * One of the variants, measured in rounds alternating with the others so drift hits each alike.
   */
  private static final class Variant {
    private final SecondWrite write;
    private final List<long[]> latencies = new ArrayList<>();
    private double seconds;

    Variant(SecondWrite write) {
      this.write = write;
    }

    void measure(AgroalDataSource pool, Scenarios on, Duration run) throws Exception {
      long t0 = System.nanoTime();
      latencies.add(on.businessTransactions(pool, write, run));
      seconds += (System.nanoTime() - t0) / 1e9;
    }

    TxRun result() {
      return new TxRun(count(latencies) / seconds, LatencySummary.of(concat(latencies)));
    }
  }

  /**
   * A minimal business transaction (one row), {@value #ENQUEUE_CLIENTS} clients on one pool: bare;
   * with the physical floor of writing a job (a plain second row of the outbox row's size, raw
   * JDBC, one primary key, no outbox library); and with one outbox job. The outbox's cost is its
   * ratio to the floor; then the outbox table's index count and bytes per job.
   */
  private void enqueueOverhead() throws Exception {
    db.truncate();
    Outbox outbox =
        new Outbox(OutboxConfig.builder().destinations(BenchDatabase.DESTINATION).build());
    String tag = tag();
    AtomicLong jobs = new AtomicLong();
    SecondWrite job =
        (c, i) ->
            outbox.enqueue(
                c,
                OutboxMessage.builder()
                    .operationId(tag + "-" + jobs.incrementAndGet())
                    .destination(BenchDatabase.DESTINATION)
                    .payload("{\"order\":" + i + "}")
                    .build());
    Duration third = sizes.enqueueRun().dividedBy(3);
    try (AgroalDataSource pool = db.pool(BenchDatabase.RELAY_POOL_MAX_SIZE)) {
      businessTransactions(
          pool, job, Duration.ofMillis(500)); // warm-up: connections, JIT, a row size
      long outboxRowBytes = db.averageRowBytes("outbox_message");
      // The floor's row: the outbox row's size, less what the floor row carries besides its body
      // (row header, id, the text's length word); floor_row_bytes shows how close it came. Where
      // the row size is unknown, the body PostgreSQL's measure gives (113 - 36 bytes).
      String body = "x".repeat((int) Math.max(1, outboxRowBytes > 0 ? outboxRowBytes - 36 : 77));
      SecondWrite floor =
          (c, i) -> {
            try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO bench_floor (body) VALUES (?)")) {
              ps.setString(1, body);
              ps.executeUpdate();
            }
          };
      List<Variant> variants = List.of(new Variant(null), new Variant(floor), new Variant(job));
      List<Variant> backwards = new ArrayList<>(variants);
      Collections.reverse(backwards);
      for (int round = 0; round < 2; round++) {
        // The second round in reverse order: a drift in either direction hits every variant alike.
        for (Variant v : round == 0 ? variants : backwards) {
          v.measure(pool, this, third);
        }
      }
      TxRun a = variants.get(0).result();
      TxRun f = variants.get(1).result();
      TxRun b = variants.get(2).result();
      double ratio = b.txPerS() / a.txPerS();
      double toFloor = f.txPerS() / b.txPerS();
      BenchDatabase.Footprint outboxTable = db.footprint("outbox_message");
      report
          .line("enqueue-overhead")
          .put("clients", ENQUEUE_CLIENTS)
          .put("without_tx_per_s", a.txPerS())
          .put("floor_tx_per_s", f.txPerS())
          .put("with_tx_per_s", b.txPerS())
          .put("without_p50_ms", a.latency().p50Ms())
          .put("floor_p50_ms", f.latency().p50Ms())
          .put("with_p50_ms", b.latency().p50Ms())
          .put("without_p99_ms", a.latency().p99Ms())
          .put("floor_p99_ms", f.latency().p99Ms())
          .put("with_p99_ms", b.latency().p99Ms())
          .put("added_p50_ms", b.latency().p50Ms() - a.latency().p50Ms())
          .put("added_p99_ms", b.latency().p99Ms() - a.latency().p99Ms())
          .put("throughput_ratio", ratio)
          .put("throughput_loss_pct", (1 - ratio) * 100)
          .put("outbox_row_bytes", outboxRowBytes)
          .put("floor_row_bytes", db.averageRowBytes("bench_floor"))
          .put("outbox_indexes", outboxTable.indexes())
          .put("floor_indexes", db.footprint("bench_floor").indexes())
          .put("bytes_per_job", outboxTable.bytesPerRow())
          .put("jobs_in_table", outboxTable.rows())
          .put("ratio_to_floor", toFloor)
          .target("ratio_to_floor<=1.1", toFloor <= 1.1)
          .print();
    }
  }

  /** {@code second}: null for the bare transaction. */
  private long[] businessTransactions(AgroalDataSource pool, SecondWrite second, Duration run)
      throws Exception {
    long deadline = System.nanoTime() + run.toNanos();
    AtomicLong seq = new AtomicLong();
    List<long[]> perThread = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < ENQUEUE_CLIENTS; t++) {
      Thread th =
          new Thread(
              () -> {
                long[] lat = new long[1024];
                int n = 0;
                try {
                  while (System.nanoTime() < deadline) {
                    long i = seq.incrementAndGet();
                    long t0 = System.nanoTime();
                    try (Connection c = pool.getConnection()) {
                      c.setAutoCommit(false);
                      try (PreparedStatement ps =
                          c.prepareStatement(
                              "INSERT INTO bench_business (customer, amount) VALUES (?, ?)")) {
                        ps.setString(1, "customer-" + i);
                        ps.setInt(2, (int) (i % 1000));
                        ps.executeUpdate();
                      }
                      if (second != null) {
                        second.write(c, i);
                      }
                      c.commit();
                    }
                    if (n == lat.length) {
                      lat = java.util.Arrays.copyOf(lat, n * 2);
                    }
                    lat[n++] = System.nanoTime() - t0;
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
                perThread.add(java.util.Arrays.copyOf(lat, n));
              },
              "bench-business-" + t);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    if (!errors.isEmpty()) {
      throw new IllegalStateException(
          "business transaction failed: " + errors.get(0), errors.get(0));
    }
    return concat(perThread);
  }

  private static long count(List<long[]> runs) {
    return runs.stream().mapToLong(r -> r.length).sum();
  }

  private static long[] concat(List<long[]> runs) {
    long[] all = new long[(int) count(runs)];
    int k = 0;
    for (long[] r : runs) {
      System.arraycopy(r, 0, all, k, r.length);
      k += r.length;
    }
    return all;
  }

  // ---- 5. history ------------------------------------------------------------------------------

  /**
   * Drain and latency at {@value #TARGET_RATE}/s with {@code historyRows} S rows present, vs.
   * empty.
   */
  private void history() throws Exception {
    double limit = sqlLimitRate();
    DrainResult empty = drainOne();
    LatencyResult emptyLatency = latencyEmpty();
    db.truncate();
    db.fillHistory(sizes.historyRows());
    DrainResult r = drainInProcess(sizes.drainJobs(), 0, false);
    double ratio = r.jobsPerS() / empty.jobsPerS();
    drainLine("history", r, limit)
        .put("history_rows", sizes.historyRows())
        .put("empty_jobs_per_s", empty.jobsPerS())
        .put("ratio_to_empty", ratio)
        .put("ratio_to_sql_limit", r.jobsPerS() / limit)
        .target("ratio_to_empty>=0.9", ratio >= 0.9)
        .print();
    LatencyResult l = measureLatency(TARGET_RATE, false);
    double latencyRatio = l.summary().p50Ms() / emptyLatency.summary().p50Ms();
    latencyLine("history", l)
        .put("history_rows", sizes.historyRows())
        .put("empty_p50_ms", emptyLatency.summary().p50Ms())
        .put("empty_p99_ms", emptyLatency.summary().p99Ms())
        .put("p50_ratio_to_empty", latencyRatio)
        .put("p99_ratio_to_empty", l.summary().p99Ms() / emptyLatency.summary().p99Ms())
        .target("p50_ratio_to_empty<=1.1", latencyRatio <= 1.1)
        .print();
  }

  // ---- 6. ordered ------------------------------------------------------------------------------

  /** The drain with every job under one of {@value #ORDERING_KEYS} keys (FIFO per key) vs. none. */
  private void ordered() throws Exception {
    double limit = sqlLimitRate();
    DrainResult unordered = drainOne();
    warmUpKeyed("ordered");
    DrainResult r = drainInProcess(sizes.drainJobs(), ORDERING_KEYS, true);
    double ratio = r.jobsPerS() / unordered.jobsPerS();
    drainLine("ordered", r, limit)
        .put("keys", ORDERING_KEYS)
        .put("order_violations", r.orderViolations())
        .put("unordered_jobs_per_s", unordered.jobsPerS())
        .put("ratio_to_unordered", ratio)
        .put("ratio_to_sql_limit", r.jobsPerS() / limit)
        .target("ratio_to_unordered>=0.8", ratio >= 0.8)
        .print();
  }

  /**
   * Warms the keyed path (key heads, their promotion in the completion, a key's run), which an
   * unkeyed drain never runs, before the first keyed drain of this JVM.
   */
  private void warmUpKeyed(String scenario) throws Exception {
    if (!keyedWarm) {
      keyedWarm = true;
      warmUpHere(
          report.line(scenario).put("keys", ORDERING_KEYS),
          () -> drainInProcess(sizes.warmupJobs(), ORDERING_KEYS, true));
    }
  }

  /**
   * A backlog on fewer keys than workers (8 keys) and on a hundred keys, each key's jobs
   * interleaved in id order: every claim must read past the later jobs of busy keys, and a key
   * moves one job at a time, so this is the cost of a key's hand-over from one job to the next.
   */
  private void orderedHot() throws Exception {
    double limit = sqlLimitRate();
    DrainResult unordered = drainOne();
    warmUpKeyed("ordered-hot");
    for (int[] keysAndTarget : new int[][] {{8, 50}, {100, 80}}) {
      int keys = keysAndTarget[0];
      double target = keysAndTarget[1] / 100.0;
      DrainResult r = drainInProcess(sizes.drainJobs(), keys, true);
      double ratio = r.jobsPerS() / unordered.jobsPerS();
      drainLine("ordered-hot", r, limit)
          .put("keys", keys)
          .put("jobs_per_key", sizes.drainJobs() / keys)
          .put("order_violations", r.orderViolations())
          .put("unordered_jobs_per_s", unordered.jobsPerS())
          .put("ratio_to_unordered", ratio)
          .target("ratio_to_unordered>=" + target, ratio >= target)
          .print();
    }
    claimPlan();
  }

  /**
   * PostgreSQL: the plan of one claim by the store (its statements as the dialect holds them now,
   * read through {@link PlanCapture}) on a backlog of {@value #EXPLAIN_KEYS} keys x {@value
   * #EXPLAIN_JOBS_PER_KEY} jobs with every key but half a batch in flight (their heads claimed):
   * the claim must find the few free heads without reading the later jobs of the busy keys, so it
   * should read no more index entries than the batch plus the keys in flight.
   */
  private void claimPlan() {
    if (!db.postgres()) {
      report.line("ordered-hot").put("explain", "skipped_postgresql_only").print();
      return;
    }
    int batch = relayConfig.batchSize();
    int inFlight = EXPLAIN_KEYS - batch / 2;
    db.truncate();
    db.fillReady(tag(), EXPLAIN_KEYS * EXPLAIN_JOBS_PER_KEY, EXPLAIN_KEYS);
    Duration lease = relayConfig.leaseDuration();
    int held =
        JdbcOutboxStore.create(db.plain()).claimBatch(ClaimRequest.of(inFlight, lease)).size();
    PlanCapture capture = new PlanCapture(db.plain());
    int claimed =
        JdbcOutboxStore.create(capture.dataSource())
            .claimBatch(ClaimRequest.of(batch, lease))
            .size();
    long entries = 0;
    long removed = 0;
    long seqRows = 0;
    long buffers = 0;
    double ms = 0;
    for (PlanCapture.Plan plan : capture.plans()) {
      PlanCapture.Reads r = PlanCapture.reads(plan);
      entries += r.indexEntries();
      removed += r.removedByFilter();
      seqRows += r.seqScanRows();
      buffers += r.sharedBuffers();
      ms += r.executionMs();
    }
    report
        .line("ordered-hot")
        .put("explain", "claim")
        .put("keys", EXPLAIN_KEYS)
        .put("jobs_per_key", EXPLAIN_JOBS_PER_KEY)
        .put("keys_in_flight", held)
        .put("batch", batch)
        .put("claimed", claimed)
        .put("statements", capture.plans().size())
        .put("index_entries_read", entries)
        .put("rows_removed_by_filter", removed)
        .put("seq_scan_rows", seqRows)
        .put("shared_buffers", buffers)
        .put("execution_ms", ms)
        .target(
            "index_entries_read<=batch+keys_in_flight",
            !capture.plans().isEmpty() && entries <= batch + held)
        .print();
  }

  /**
   * Seed 004's table replayed: 12 jobs, 4 workers, a sink that takes 200 ms (600 ms for the first
   * job), unordered, on one key, on two keys of six (interleaved) and on twelve keys. Seconds from
   * the relay's start until every job is sent, next to the lab's figure (and the ideal where the
   * lab gave none).
   */
  private void seed004() throws Exception {
    String concurrency = System.getProperty("outbox.relay.concurrency");
    System.setProperty("outbox.relay.concurrency", "4");
    try {
      // keys, lab seconds, target seconds (0: none)
      for (double[] c :
          new double[][] {{0, 0.83, 0.9}, {1, 2.9, 3.2}, {2, 1.6, 1.7}, {12, 0.83, 0}}) {
        int keys = (int) c[0];
        db.truncate();
        db.fillReady(tag(), 12, keys);
        long first = db.count("SELECT MIN(id) FROM outbox_message WHERE state = 'R'");
        RecordingSink recording = new RecordingSink();
        // Answers after 200 ms (600 ms for the first job) without holding a relay thread.
        MessageSink sink =
            m ->
                CompletableFuture.supplyAsync(
                    () -> recording.record(m),
                    CompletableFuture.delayedExecutor(
                        m.id() == first ? 600 : 200, TimeUnit.MILLISECONDS));
        InProcessRelay relay = new InProcessRelay(db.url(), db.user(), sink);
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofSeconds(60).toNanos();
        relay.start();
        while (db.anyUnfinished() && System.nanoTime() < deadline) {
          Thread.sleep(2);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        relay.stop();
        relay.close();
        long sent = db.count("SELECT COUNT(*) FROM outbox_message WHERE state = 'S'");
        if (sent != 12 || recording.duplicates() > 0 || recording.orderViolations() > 0) {
          throw new IllegalStateException(
              "seed004 keys="
                  + keys
                  + ": sent "
                  + sent
                  + " of 12, duplicates "
                  + recording.duplicates()
                  + ", order violations "
                  + recording.orderViolations());
        }
        BenchReport.Line line =
            report
                .line("seed004")
                .put("case", keys == 0 ? "unordered" : keys + "-keys")
                .put("jobs", 12)
                .put("workers", 4)
                .put("seconds", seconds)
                .put("lab_seconds", c[1])
                .put("order_violations", recording.orderViolations());
        if (c[2] > 0) {
          line.target("seconds<=" + c[2], seconds <= c[2]);
        }
        line.print();
      }
    } finally {
      if (concurrency == null) {
        System.clearProperty("outbox.relay.concurrency");
      } else {
        System.setProperty("outbox.relay.concurrency", concurrency);
      }
    }
  }

  // ---- 7. idle ---------------------------------------------------------------------------------

  /**
   * A relay process on an empty outbox, once its idle wait has grown to the maximum: claim
   * statements per second and CPU used (of one core), from /proc.
   */
  private void idle() throws Exception {
    db.truncate();
    try (ChildRelay child = ChildRelay.launch("idle-relay", db.childUrl(), db.user(), childDir)) {
      child.await("READY", Duration.ofSeconds(90));
      child.send("GO");
      child.await("STARTED", Duration.ofSeconds(30));
      // The wait doubles from idle-min-wait: after about twice idle-max-wait it sits at the
      // maximum.
      Thread.sleep(relayConfig.idleMaxWait().multipliedBy(2).plusMillis(500).toMillis());
      child.send("STATS");
      double claims0 = ChildRelay.field(child.await("STATS", Duration.ofSeconds(10)), "claims");
      double cpu0 = HostStats.cpuSeconds(child.pid());
      long t0 = System.nanoTime();
      Thread.sleep(sizes.idleWindow().toMillis());
      child.send("STATS");
      String stats = child.await("STATS", Duration.ofSeconds(10));
      double seconds = (System.nanoTime() - t0) / 1e9;
      double claimsPerS = (ChildRelay.field(stats, "claims") - claims0) / seconds;
      double cpuPct = (HostStats.cpuSeconds(child.pid()) - cpu0) / seconds * 100;
      double rss = HostStats.peakRssMb(child.pid());
      child.send("STOP");
      child.await("STOPPED", Duration.ofSeconds(30));
      report
          .line("idle")
          .put("seconds", seconds)
          .put("idle_max_wait_ms", relayConfig.idleMaxWait().toMillis())
          .put("claims_per_s", claimsPerS)
          .put("cpu_pct_of_one_core", cpuPct)
          .put("rss_peak_mb", rss)
          .put("heap_used_peak_mb", ChildRelay.field(stats, "heap_used_peak_mb"))
          .target(
              "claims_per_s<=" + (int) MAX_IDLE_CLAIMS_PER_S, claimsPerS <= MAX_IDLE_CLAIMS_PER_S)
          .print();
    }
  }
}
