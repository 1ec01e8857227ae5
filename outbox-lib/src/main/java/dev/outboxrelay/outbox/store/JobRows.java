package dev.outboxrelay.outbox.store;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A job's row as the stores read it: {@link Dialect#CLAIM_COLUMNS} into a {@link ClaimedJob},
 * {@link Dialect#MESSAGE_COLUMNS} into a {@link StoredJob}, times and tokens through the dialect's
 * {@link TypeBinding}. Maps what a statement returns; calls no store.
 */
public final class JobRows {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<LinkedHashMap<String, String>> HEADERS =
      new TypeReference<>() {};

  private final TypeBinding binding;

  public JobRows(TypeBinding binding) {
    this.binding = binding;
  }

  /** The one job (of {@link Dialect#MESSAGE_COLUMNS}) a query on {@code c} returns, if any. */
  public Optional<StoredJob> queryOne(Connection c, String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return Rows.list(ps, this::stored).stream().findFirst();
    }
  }

  ClaimedJob claimed(ResultSet rs) throws SQLException {
    return new ClaimedJob(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        headers(rs.getString(7)),
        rs.getInt(8),
        binding.readUuid(rs, 9),
        instant(rs, 10),
        instant(rs, 11),
        rs.getBoolean(12));
  }

  StoredJob stored(ResultSet rs) throws SQLException {
    return new StoredJob(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getString(7),
        rs.getString(8).charAt(0),
        binding.readUuid(rs, 9),
        instant(rs, 10),
        instant(rs, 11),
        rs.getInt(12),
        rs.getString(13),
        instant(rs, 14),
        instant(rs, 15),
        instant(rs, 16),
        instant(rs, 17),
        rs.getBoolean(18));
  }

  Instant instant(ResultSet rs, int column) throws SQLException {
    return binding.readInstant(rs, column);
  }

  /** A {@code headers} column's JSON object, in its order. */
  public static LinkedHashMap<String, String> parseHeaders(String json) throws IOException {
    return JSON.readValue(json, HEADERS);
  }

  private static Map<String, String> headers(String json) throws SQLException {
    if (json == null || json.isEmpty()) {
      return Map.of();
    }
    try {
      return parseHeaders(json);
    } catch (IOException e) {
      throw new SQLException("headers column is not a JSON object of strings: " + json, e);
    }
  }
}
