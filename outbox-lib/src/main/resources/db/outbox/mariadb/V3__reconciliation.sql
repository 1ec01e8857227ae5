-- Reconciliation, MariaDB: the same tables as PostgreSQL (see its script for the model). Times
-- are UTC in DATETIME(3) from UTC_TIMESTAMP(3), never NOW() (session time zone); utf8mb4_bin so
-- operation IDs compare exactly, and join outbox_message's without a collation conversion.
-- An external consumer counting "applied" events upserts on the unique key:
--   INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count, source)
--   VALUES (?, ?, ?, 1, 'kafka:billing.applied')
--   ON DUPLICATE KEY UPDATE applied_count = applied_count + 1;
CREATE TABLE outbox_confirmation (
    id             BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    operation_id   VARCHAR(200)  NOT NULL,
    destination    VARCHAR(200)  NOT NULL,
    confirmed_at   DATETIME(3)   NOT NULL,
    applied_count  INTEGER       NOT NULL DEFAULT 1,
    source         VARCHAR(200)  NOT NULL,
    recorded_at    DATETIME(3)   NOT NULL DEFAULT UTC_TIMESTAMP(3),
    CONSTRAINT uq_outbox_confirmation_operation UNIQUE (operation_id, destination),
    CONSTRAINT ck_outbox_confirmation_applied CHECK (applied_count >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- Confirmations without a job are classified in the window of their confirmed_at.
CREATE INDEX ix_outbox_confirmation_time ON outbox_confirmation (destination, confirmed_at);

-- Jobs are classified in the window of their created_at.
CREATE INDEX ix_outbox_message_created ON outbox_message (destination, created_at);

-- One row per run; schedule_slot is unique (NULLs, the runs on demand, may repeat).
CREATE TABLE outbox_reconciliation_run (
    id                  BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    window_start        DATETIME(3)   NOT NULL,
    window_end          DATETIME(3)   NOT NULL,
    started_at          DATETIME(3)   NOT NULL DEFAULT UTC_TIMESTAMP(3),
    finished_at         DATETIME(3),
    triggered_by        VARCHAR(20)   NOT NULL,
    owner               VARCHAR(200)  NOT NULL,
    schedule_slot       DATETIME(3),
    matched             INTEGER,
    sent_unconfirmed    INTEGER,
    confirmed_not_sent  INTEGER,
    duplicate_effects   INTEGER,
    dead                INTEGER,
    pending             INTEGER,
    error               VARCHAR(2000),
    CONSTRAINT uq_outbox_reconciliation_run_slot UNIQUE (schedule_slot),
    CONSTRAINT ck_outbox_reconciliation_run_window CHECK (window_end > window_start)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Every job or confirmation of a run that is not matched (matched ones are only counted).
CREATE TABLE outbox_reconciliation_item (
    id               BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id           BIGINT        NOT NULL,
    operation_id     VARCHAR(200)  NOT NULL,
    message_id       BIGINT,
    destination      VARCHAR(200)  NOT NULL,
    state            CHAR(1),
    category         VARCHAR(30)   NOT NULL,
    sent_at          DATETIME(3),
    confirmed_count  INTEGER       NOT NULL,
    last_error       VARCHAR(2000),
    action           VARCHAR(30),
    CONSTRAINT fk_outbox_reconciliation_item_run FOREIGN KEY (run_id)
        REFERENCES outbox_reconciliation_run (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE INDEX ix_outbox_reconciliation_item_run ON outbox_reconciliation_item (run_id, category, operation_id);

-- Fleet-wide leases by name ('reconciliation'), always with the database clock.
CREATE TABLE outbox_lock (
    name         VARCHAR(100)  NOT NULL PRIMARY KEY,
    owner        VARCHAR(200)  NOT NULL,
    lease_until  DATETIME(3)   NOT NULL,
    acquired_at  DATETIME(3)   NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
