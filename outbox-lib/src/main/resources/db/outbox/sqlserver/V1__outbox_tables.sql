-- Outbox schema, SQL Server 2017+. Same tables, columns, states and indexes as PostgreSQL.
-- All lease and job times are UTC from SYSUTCDATETIME() in datetime2(3); claim tokens are
-- uniqueidentifier. Text is nvarchar (Unicode); the *_BIN2 collation makes operation IDs and
-- ordering keys compare exactly (case-sensitive), as on PostgreSQL, whatever the database's
-- default collation. The clustered key is id, the order in which the claim scans ready rows,
-- so claims and token-checked completions lock rows in the same (id) order.
CREATE TABLE outbox_message (
    id             BIGINT IDENTITY(1, 1) NOT NULL,
    operation_id   NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    destination    NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ordering_key   NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NULL,
    payload        NVARCHAR(MAX) NOT NULL,
    content_type   NVARCHAR(100) NOT NULL,
    headers        NVARCHAR(MAX) NULL,
    state          CHAR(1)       NOT NULL CONSTRAINT df_outbox_message_state DEFAULT 'R',
    claim_token    UNIQUEIDENTIFIER NULL,
    lease_until    DATETIME2(3)  NULL,
    deliver_after  DATETIME2(3)  NOT NULL CONSTRAINT df_outbox_message_deliver_after DEFAULT SYSUTCDATETIME(),
    attempts       INT           NOT NULL CONSTRAINT df_outbox_message_attempts DEFAULT 0,
    last_error     NVARCHAR(2000) NULL,
    created_at     DATETIME2(3)  NOT NULL CONSTRAINT df_outbox_message_created_at DEFAULT SYSUTCDATETIME(),
    claimed_at     DATETIME2(3)  NULL,
    sent_at        DATETIME2(3)  NULL,
    confirmed_at   DATETIME2(3)  NULL,
    CONSTRAINT pk_outbox_message PRIMARY KEY CLUSTERED (id),
    CONSTRAINT uq_outbox_message_operation_id UNIQUE (operation_id),
    CONSTRAINT ck_outbox_message_state CHECK (state IN ('R', 'W', 'S', 'C', 'D')),
    CONSTRAINT ck_outbox_message_claim CHECK ((state = 'W' AND claim_token IS NOT NULL)
        OR (state <> 'W' AND claim_token IS NULL))
);

-- The ready scan: claim cost follows the ready backlog, not history.
CREATE INDEX ix_outbox_message_due ON outbox_message (state, deliver_after, id);
-- Ready rows in clustered-key (id) order, so TOP (n) ... ORDER BY id reads no more rows than it
-- locks and needs no sort. Not a filtered index (WHERE state = 'R'): every writer of the table
-- would then need QUOTED_IDENTIFIER and ANSI_NULLS ON (sqlcmd's default is OFF), or fail (1934).
CREATE INDEX ix_outbox_message_ready ON outbox_message (state, id) INCLUDE (deliver_after, ordering_key);
-- The reaper's scan of leases.
CREATE INDEX ix_outbox_message_lease ON outbox_message (state, lease_until);
-- Per-key FIFO: earlier unfinished jobs of a key.
CREATE INDEX ix_outbox_message_ordering ON outbox_message (ordering_key, id) INCLUDE (state);

CREATE TABLE outbox_attempt (
    id                BIGINT IDENTITY(1, 1) NOT NULL,
    message_id        BIGINT        NOT NULL,
    attempt_no        INT           NOT NULL,
    claim_token       UNIQUEIDENTIFIER NULL,
    started_at        DATETIME2(3)  NOT NULL,
    finished_at       DATETIME2(3)  NOT NULL CONSTRAINT df_outbox_attempt_finished_at DEFAULT SYSUTCDATETIME(),
    outcome           VARCHAR(20)   NOT NULL,
    error_class       NVARCHAR(300) NULL,
    error_message     NVARCHAR(2000) NULL,
    response_summary  NVARCHAR(2000) NULL,
    CONSTRAINT pk_outbox_attempt PRIMARY KEY CLUSTERED (id),
    CONSTRAINT fk_outbox_attempt_message FOREIGN KEY (message_id)
        REFERENCES outbox_message (id) ON DELETE CASCADE
);
CREATE INDEX ix_outbox_attempt_message ON outbox_attempt (message_id, attempt_no);
