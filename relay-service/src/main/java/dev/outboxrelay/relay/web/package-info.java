/**
 * HTTP plumbing shared by the relay's resources (admin, reconciliation).
 *
 * <p>Problems: every refusal is an RFC 7807 {@code application/problem+json} body ({@link Problem})
 * naming the rejected field; bad input never gets a 500.
 *
 * <p>Security: resources declare {@code @RolesAllowed} with {@link Roles} ({@code outbox-viewer}
 * reads, {@code outbox-operator} acts and reads). Identities come from HTTP Basic against the
 * embedded users of {@code quarkus.security.users.embedded.*} (none by default: a relay without
 * configured users lets nobody in); {@code /admin/*} additionally requires an authenticated caller
 * by path, so an endpoint that forgets its annotation is still closed. {@code /q/health} and {@code
 * /q/metrics} stay open. docs/operations.md "Admin API" shows how to configure users and how to
 * switch to OIDC with the same role names.
 */
package dev.outboxrelay.relay.web;
