-- The receiver's inbox, MariaDB 10.6+ (InnoDB): the same table, columns and indexes as PostgreSQL
-- (see its script). Times are UTC from UTC_TIMESTAMP(3) in DATETIME(3); utf8mb4_bin so operation
-- IDs compare byte for byte, as on PostgreSQL.
CREATE TABLE outbox_inbox (
    id                BIGINT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
    destination       VARCHAR(200)    NOT NULL,
    operation_id      VARCHAR(200)    NOT NULL,
    payload_sha256    CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    payload_bytes     INTEGER         NOT NULL,
    message_id        BIGINT,
    outcome           VARCHAR(2000),
    applied_at        DATETIME(3)     NOT NULL DEFAULT UTC_TIMESTAMP(3),
    last_delivery_at  DATETIME(3)     NOT NULL DEFAULT UTC_TIMESTAMP(3),
    deliveries        INTEGER         NOT NULL DEFAULT 1,
    CONSTRAINT uq_outbox_inbox_operation UNIQUE (destination, operation_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX ix_outbox_inbox_applied ON outbox_inbox (applied_at, operation_id);
