-- Large payloads by reference (see the PostgreSQL script): bodies over the producer's inline
-- threshold live here, and payload_by_ref marks the jobs whose payload column is a reference.
ALTER TABLE outbox_message ADD COLUMN payload_by_ref BOOLEAN DEFAULT FALSE NOT NULL;

-- No CHECK on size_bytes: H2 cannot evaluate a CHECK created by a closed connection (see V1).
CREATE TABLE outbox_payload (
    message_id  BIGINT   PRIMARY KEY,
    body        CHARACTER LARGE OBJECT NOT NULL,
    size_bytes  INTEGER  NOT NULL,
    sha256      CHAR(64) NOT NULL,
    CONSTRAINT fk_outbox_payload_message FOREIGN KEY (message_id)
        REFERENCES outbox_message (id) ON DELETE CASCADE
);
