/**
 * A thin CDI/JTA adapter for Quarkus and Jakarta EE applications, kept out of the JDBC core. {@link
 * TransactionalOutbox} joins the caller's JTA transaction on the application's default datasource:
 * with Agroal (Quarkus), the connection it obtains inside a transaction is the one Hibernate ORM
 * uses for that transaction, so the business rows and the job commit or roll back together.
 */
package dev.outboxrelay.outbox.orm;
