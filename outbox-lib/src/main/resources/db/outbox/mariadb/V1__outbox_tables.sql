-- Outbox schema, MariaDB 10.6+ (InnoDB; FOR UPDATE SKIP LOCKED needs 10.6). Same tables, columns,
-- states and indexes as PostgreSQL. All times are UTC from the database clock (UTC_TIMESTAMP(3))
-- in DATETIME(3), which carries no zone: never CURRENT_TIMESTAMP/NOW(), which follow the session
-- time zone. utf8mb4_bin: operation IDs and ordering keys compare byte for byte (case-sensitive),
-- as on PostgreSQL. Claim tokens are CHAR(36) text UUIDs (MariaDB's UUID type needs 10.7).
CREATE TABLE outbox_message (
    id             BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    operation_id   VARCHAR(200)  NOT NULL,
    destination    VARCHAR(200)  NOT NULL,
    ordering_key   VARCHAR(200),
    payload        LONGTEXT      NOT NULL,
    content_type   VARCHAR(100)  NOT NULL,
    headers        LONGTEXT,
    state          CHAR(1)       NOT NULL DEFAULT 'R',
    claim_token    CHAR(36) CHARACTER SET ascii COLLATE ascii_bin,
    lease_until    DATETIME(3),
    deliver_after  DATETIME(3)   NOT NULL DEFAULT UTC_TIMESTAMP(3),
    attempts       INTEGER       NOT NULL DEFAULT 0,
    last_error     VARCHAR(2000),
    created_at     DATETIME(3)   NOT NULL DEFAULT UTC_TIMESTAMP(3),
    claimed_at     DATETIME(3),
    sent_at        DATETIME(3),
    confirmed_at   DATETIME(3),
    CONSTRAINT uq_outbox_message_operation_id UNIQUE (operation_id),
    CONSTRAINT ck_outbox_message_state CHECK (state IN ('R', 'W', 'S', 'C', 'D')),
    CONSTRAINT ck_outbox_message_claim CHECK ((state = 'W') = (claim_token IS NOT NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The ready scan: claim cost follows the ready backlog, not history.
CREATE INDEX ix_outbox_message_due ON outbox_message (state, deliver_after, id);
-- Ready rows in id order (no partial indexes in MariaDB): the claim's ORDER BY id LIMIT n.
CREATE INDEX ix_outbox_message_ready ON outbox_message (state, id);
-- The reaper's scan of leases.
CREATE INDEX ix_outbox_message_lease ON outbox_message (state, lease_until);
-- Per-key FIFO: earlier unfinished jobs of a key.
CREATE INDEX ix_outbox_message_ordering ON outbox_message (ordering_key, id);

CREATE TABLE outbox_attempt (
    id                BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    message_id        BIGINT        NOT NULL,
    attempt_no        INTEGER       NOT NULL,
    claim_token       CHAR(36) CHARACTER SET ascii COLLATE ascii_bin,
    started_at        DATETIME(3)   NOT NULL,
    finished_at       DATETIME(3)   NOT NULL DEFAULT UTC_TIMESTAMP(3),
    outcome           VARCHAR(20)   NOT NULL,
    error_class       VARCHAR(300),
    error_message     VARCHAR(2000),
    response_summary  VARCHAR(2000),
    CONSTRAINT fk_outbox_attempt_message FOREIGN KEY (message_id)
        REFERENCES outbox_message (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX ix_outbox_attempt_message ON outbox_attempt (message_id, attempt_no);
