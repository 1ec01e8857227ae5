-- The demo's own tables, SQL Server 2017+: the same tables, columns and indexes as db/demo/h2.
-- The outbox tables come from outbox-lib (OutboxSchema, own history).
-- Times are DATETIMEOFFSET from SYSDATETIMEOFFSET() (the demo reads them as OffsetDateTime).
-- Text is NVARCHAR, as the driver sends string parameters (no implicit conversion in lookups);
-- operation IDs use the *_BIN2 collation so they compare exactly (case-sensitive), as the
-- outbox's own operation_id does, whatever the database's default collation.

-- The business write: one row per order, written with its outbox job in one transaction.
CREATE TABLE orders (
    id            BIGINT IDENTITY(1, 1) NOT NULL,
    customer      NVARCHAR(200)  NOT NULL,
    amount_cents  BIGINT         NOT NULL,
    created_at    DATETIMEOFFSET(6) NOT NULL CONSTRAINT df_orders_created_at DEFAULT SYSDATETIMEOFFSET(),
    CONSTRAINT pk_orders PRIMARY KEY (id)
);

-- The demo sink's dedup record: one row per operation ID it has applied. The primary key is
-- what makes two concurrent deliveries of one key apply the effect once.
CREATE TABLE demo_sink_ledger (
    operation_id      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    destination       NVARCHAR(200) NOT NULL,
    message_id        BIGINT NULL,
    payload           NVARCHAR(MAX) NULL,
    first_applied_at  DATETIMEOFFSET(6) NOT NULL
        CONSTRAINT df_demo_sink_ledger_first DEFAULT SYSDATETIMEOFFSET(),
    -- SinkLedger sets this to CURRENT_TIMESTAMP on a repeat delivery: a DATETIME in the server's
    -- time zone, stored with offset +00:00 (right in the official image, which runs in UTC).
    -- Informational only: nothing reads it back to compare.
    last_delivery_at  DATETIMEOFFSET(6) NOT NULL
        CONSTRAINT df_demo_sink_ledger_last DEFAULT SYSDATETIMEOFFSET(),
    deliveries        INT NOT NULL CONSTRAINT df_demo_sink_ledger_deliveries DEFAULT 1,
    CONSTRAINT pk_demo_sink_ledger PRIMARY KEY (operation_id)
);
CREATE INDEX ix_demo_sink_ledger_applied ON demo_sink_ledger (first_applied_at, operation_id);

-- The business effect of a delivery. operation_id is deliberately NOT unique: only the ledger
-- prevents a second invoice, so a dedup bug shows up as duplicate rows here, not as an error.
CREATE TABLE demo_invoice (
    id             BIGINT IDENTITY(1, 1) NOT NULL,
    operation_id   NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    order_payload  NVARCHAR(MAX) NULL,
    created_at     DATETIMEOFFSET(6) NOT NULL
        CONSTRAINT df_demo_invoice_created_at DEFAULT SYSDATETIMEOFFSET(),
    CONSTRAINT pk_demo_invoice PRIMARY KEY (id)
);
CREATE INDEX ix_demo_invoice_operation ON demo_invoice (operation_id);
