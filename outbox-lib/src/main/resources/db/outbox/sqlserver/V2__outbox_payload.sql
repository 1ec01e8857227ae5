-- Large payloads by reference, SQL Server (see the PostgreSQL script). A body over the producer's
-- inline threshold is stored here, out of band, and its job's payload column holds only a short
-- reference; payload_by_ref (BIT, no BOOLEAN) says which jobs these are. Existing rows are inline
-- (0). T-SQL's ADD takes no COLUMN keyword.
ALTER TABLE outbox_message ADD payload_by_ref BIT NOT NULL
    CONSTRAINT df_outbox_message_payload_by_ref DEFAULT 0;

-- One body per job; deleting the job (retention) deletes its body.
CREATE TABLE outbox_payload (
    message_id  BIGINT        NOT NULL,
    body        NVARCHAR(MAX) NOT NULL,
    -- UTF-8 length and lowercase hex SHA-256 of the body: the relay verifies both before a send,
    -- and an idempotent re-enqueue compares them instead of the whole body.
    size_bytes  INT           NOT NULL,
    sha256      CHAR(64)      NOT NULL,
    CONSTRAINT pk_outbox_payload PRIMARY KEY CLUSTERED (message_id),
    CONSTRAINT ck_outbox_payload_size CHECK (size_bytes >= 0),
    CONSTRAINT fk_outbox_payload_message FOREIGN KEY (message_id)
        REFERENCES outbox_message (id) ON DELETE CASCADE
);
