/** Health: liveness (the claim loop thread runs) and readiness (claims and maintenance succeed). */
package dev.outboxrelay.relay.health;
