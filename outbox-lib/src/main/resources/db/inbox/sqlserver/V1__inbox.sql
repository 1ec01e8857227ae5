-- The receiver's inbox, SQL Server: the same table, columns and indexes as PostgreSQL (see its
-- script). Times are UTC in datetime2(3) from SYSUTCDATETIME(); IDs use the _BIN2 collation so
-- they compare exactly, as on the outbox tables.
CREATE TABLE outbox_inbox (
    id                BIGINT IDENTITY(1, 1) NOT NULL,
    destination       NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    operation_id      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    payload_sha256    CHAR(64)        NOT NULL,
    payload_bytes     INT             NOT NULL,
    message_id        BIGINT,
    outcome           NVARCHAR(2000),
    applied_at        DATETIME2(3)    NOT NULL CONSTRAINT df_outbox_inbox_applied_at DEFAULT SYSUTCDATETIME(),
    last_delivery_at  DATETIME2(3)    NOT NULL CONSTRAINT df_outbox_inbox_last_delivery_at DEFAULT SYSUTCDATETIME(),
    deliveries        INT             NOT NULL CONSTRAINT df_outbox_inbox_deliveries DEFAULT 1,
    CONSTRAINT pk_outbox_inbox PRIMARY KEY CLUSTERED (id),
    CONSTRAINT uq_outbox_inbox_operation UNIQUE (destination, operation_id)
);
CREATE INDEX ix_outbox_inbox_applied ON outbox_inbox (applied_at, operation_id);
