/**
 * The up/down state of the relay's dependencies: a {@link StateChangeLog} per source database and
 * per destination ({@link DestinationStates}), fed with every call's outcome, logged once per
 * change plus a rate-limited reminder. A leaf package: the services report to it, health and the
 * console read it.
 */
package dev.outboxrelay.relay.state;
