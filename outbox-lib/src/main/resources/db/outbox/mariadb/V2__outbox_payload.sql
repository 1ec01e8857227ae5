-- Large payloads by reference, MariaDB (see the PostgreSQL script). A body over the producer's
-- inline threshold is stored here, out of band, and its job's payload column holds only a short
-- reference; payload_by_ref (BOOLEAN is TINYINT(1)) says which jobs these are. Existing rows are
-- inline (false).
ALTER TABLE outbox_message ADD COLUMN payload_by_ref BOOLEAN NOT NULL DEFAULT FALSE;

-- One body per job; deleting the job (retention) deletes its body.
CREATE TABLE outbox_payload (
    message_id  BIGINT   NOT NULL PRIMARY KEY,
    body        LONGTEXT NOT NULL,
    -- UTF-8 length and lowercase hex SHA-256 of the body: the relay verifies both before a send,
    -- and an idempotent re-enqueue compares them instead of the whole body.
    size_bytes  INTEGER  NOT NULL,
    sha256      CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    CONSTRAINT ck_outbox_payload_size CHECK (size_bytes >= 0),
    CONSTRAINT fk_outbox_payload_message FOREIGN KEY (message_id)
        REFERENCES outbox_message (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
