/**
 * HTTP plumbing shared by the resources: RFC 9457 problem responses and strict JSON input. Bad
 * input of any kind (a missing or invalid field, unreadable JSON, a message the outbox rejects) is
 * answered with 400 and an {@code application/problem+json} body naming the field, never with 500;
 * the request's transaction has rolled back by then, so nothing of it is committed.
 */
package dev.outboxrelay.demo.web;
