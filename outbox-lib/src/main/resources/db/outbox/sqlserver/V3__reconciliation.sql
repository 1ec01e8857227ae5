-- Reconciliation, SQL Server: the same tables as PostgreSQL (see its script for the model). Times
-- are UTC in datetime2(3) from SYSUTCDATETIME(); operation IDs and destinations use the same
-- _BIN2 collation as outbox_message, so they compare exactly and join without a conversion.
-- An external consumer counting "applied" events upserts on the unique key:
--   MERGE INTO outbox_confirmation WITH (HOLDLOCK) AS c USING (SELECT ? AS op, ? AS dest, ? AS at) v
--   ON c.operation_id = v.op AND c.destination = v.dest
--   WHEN MATCHED THEN UPDATE SET applied_count = c.applied_count + 1
--   WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)
--   VALUES (v.op, v.dest, v.at, 1, 'kafka:billing.applied');
CREATE TABLE outbox_confirmation (
    id             BIGINT IDENTITY(1, 1) NOT NULL,
    operation_id   NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    destination    NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    confirmed_at   DATETIME2(3)  NOT NULL,
    applied_count  INT           NOT NULL CONSTRAINT df_outbox_confirmation_applied_count DEFAULT 1,
    source         NVARCHAR(200) NOT NULL,
    recorded_at    DATETIME2(3)  NOT NULL CONSTRAINT df_outbox_confirmation_recorded_at DEFAULT SYSUTCDATETIME(),
    CONSTRAINT pk_outbox_confirmation PRIMARY KEY CLUSTERED (id),
    CONSTRAINT uq_outbox_confirmation_operation UNIQUE (operation_id, destination),
    CONSTRAINT ck_outbox_confirmation_applied CHECK (applied_count >= 1)
);
-- Confirmations without a job are classified in the window of their confirmed_at.
CREATE INDEX ix_outbox_confirmation_time ON outbox_confirmation (destination, confirmed_at);

-- Jobs are classified in the window of their created_at.
CREATE INDEX ix_outbox_message_created ON outbox_message (destination, created_at);

-- One row per run. schedule_slot is unique among scheduled runs only: a UNIQUE constraint would
-- allow a single NULL (one run on demand), hence a filtered unique index. Its writers (the
-- relay's JDBC sessions) run with QUOTED_IDENTIFIER and ANSI_NULLS ON, which it needs (1934).
CREATE TABLE outbox_reconciliation_run (
    id                  BIGINT IDENTITY(1, 1) NOT NULL,
    window_start        DATETIME2(3)  NOT NULL,
    window_end          DATETIME2(3)  NOT NULL,
    started_at          DATETIME2(3)  NOT NULL CONSTRAINT df_outbox_reconciliation_run_started_at DEFAULT SYSUTCDATETIME(),
    finished_at         DATETIME2(3)  NULL,
    triggered_by        NVARCHAR(20)  NOT NULL,
    owner               NVARCHAR(200) NOT NULL,
    schedule_slot       DATETIME2(3)  NULL,
    matched             INT           NULL,
    sent_unconfirmed    INT           NULL,
    confirmed_not_sent  INT           NULL,
    duplicate_effects   INT           NULL,
    dead                INT           NULL,
    pending             INT           NULL,
    error               NVARCHAR(2000) NULL,
    CONSTRAINT pk_outbox_reconciliation_run PRIMARY KEY CLUSTERED (id),
    CONSTRAINT ck_outbox_reconciliation_run_window CHECK (window_end > window_start)
);
CREATE UNIQUE INDEX uq_outbox_reconciliation_run_slot ON outbox_reconciliation_run (schedule_slot)
    WHERE schedule_slot IS NOT NULL;

-- Every job or confirmation of a run that is not matched (matched ones are only counted).
CREATE TABLE outbox_reconciliation_item (
    id               BIGINT IDENTITY(1, 1) NOT NULL,
    run_id           BIGINT        NOT NULL,
    operation_id     NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    message_id       BIGINT        NULL,
    destination      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    state            CHAR(1)       NULL,
    category         VARCHAR(30)   NOT NULL,
    sent_at          DATETIME2(3)  NULL,
    confirmed_count  INT           NOT NULL,
    last_error       NVARCHAR(2000) NULL,
    action           VARCHAR(30)   NULL,
    CONSTRAINT pk_outbox_reconciliation_item PRIMARY KEY CLUSTERED (id),
    CONSTRAINT fk_outbox_reconciliation_item_run FOREIGN KEY (run_id)
        REFERENCES outbox_reconciliation_run (id) ON DELETE CASCADE
);
CREATE INDEX ix_outbox_reconciliation_item_run ON outbox_reconciliation_item (run_id, category, operation_id);

-- Fleet-wide leases by name ('reconciliation'), always with the database clock.
CREATE TABLE outbox_lock (
    name         NVARCHAR(100) NOT NULL,
    owner        NVARCHAR(200) NOT NULL,
    lease_until  DATETIME2(3)  NOT NULL,
    acquired_at  DATETIME2(3)  NOT NULL,
    CONSTRAINT pk_outbox_lock PRIMARY KEY CLUSTERED (name)
);
