# relay-service in JVM mode. Build context: the repository root, e.g.
#   docker build -f src-docker/relay-service.Dockerfile -t outbox-relay .
# Configure it with environment variables (see src-docker/compose.yaml and docs/deployment.md "Containers").

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# The poms first, so that a change in the sources alone keeps the dependency layer.
COPY pom.xml ./
COPY outbox-lib/pom.xml outbox-lib/
COPY relay-service/pom.xml relay-service/
COPY demo-orders/pom.xml demo-orders/
COPY outbox-lib/src outbox-lib/src
COPY relay-service/src relay-service/src
RUN mvn -B -q -DskipTests -pl relay-service -am package

FROM eclipse-temurin:17-jre
# curl for the health check only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --gid 0 --home-dir /app --no-create-home relay
WORKDIR /app
# Quarkus' fast-jar layout: libraries first (they change least), then the application.
COPY --from=build --chown=10001:0 /src/relay-service/target/quarkus-app/lib/ lib/
COPY --from=build --chown=10001:0 /src/relay-service/target/quarkus-app/*.jar ./
COPY --from=build --chown=10001:0 /src/relay-service/target/quarkus-app/app/ app/
COPY --from=build --chown=10001:0 /src/relay-service/target/quarkus-app/quarkus/ quarkus/
USER 10001
EXPOSE 8081
# Heap follows the container's memory limit; an OutOfMemoryError ends the process (the
# orchestrator restarts it, and its leases expire to another relay) instead of limping on.
# Common pool of 2: with 1 or 2 CPUs the JDK starts a thread for every HTTP answer otherwise
# (docs/deployment.md, "JVM options"). Young generation of 64 MB at most: under load G1 otherwise
# grows it through the whole heap, touching every page of it, for a live set of about 35 MB.
ENV JAVA_OPTS="-XX:MaxRAMPercentage=75 -XX:MaxNewSize=64m -XX:+ExitOnOutOfMemoryError -Djava.util.logging.manager=org.jboss.logmanager.LogManager -Djava.util.concurrent.ForkJoinPool.common.parallelism=2" \
    QUARKUS_HTTP_PORT=8081
# Ready: database reachable, claims succeeding, backlog age under outbox.relay.ready-max-backlog-age.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS "http://localhost:${QUARKUS_HTTP_PORT}/q/health/ready" >/dev/null || exit 1
# exec: the JVM is PID 1 and gets SIGTERM, so shutdown releases unfinished claims.
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/quarkus-run.jar"]
