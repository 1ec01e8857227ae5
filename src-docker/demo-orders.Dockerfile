# demo-orders in JVM mode. Build context: the repository root, e.g.
#   docker build -f src-docker/demo-orders.Dockerfile --build-arg DB_KIND=mssql -t outbox-demo .
# The database kind is fixed at build time (quarkus.datasource.db-kind): mssql (default here),
# postgresql or h2. Give the URL at run time: QUARKUS_DATASOURCE_JDBC_URL, _USERNAME, _PASSWORD.

FROM maven:3.9-eclipse-temurin-17 AS build
ARG DB_KIND=mssql
WORKDIR /src
COPY pom.xml ./
COPY outbox-lib/pom.xml outbox-lib/
COPY relay-service/pom.xml relay-service/
COPY demo-orders/pom.xml demo-orders/
COPY outbox-lib/src outbox-lib/src
COPY demo-orders/src demo-orders/src
RUN mvn -B -q -DskipTests -pl demo-orders -am package -Dquarkus.datasource.db-kind=${DB_KIND}

FROM eclipse-temurin:17-jre
# curl for the health check only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --gid 0 --home-dir /app --no-create-home demo
WORKDIR /app
COPY --from=build --chown=10001:0 /src/demo-orders/target/quarkus-app/lib/ lib/
COPY --from=build --chown=10001:0 /src/demo-orders/target/quarkus-app/*.jar ./
COPY --from=build --chown=10001:0 /src/demo-orders/target/quarkus-app/app/ app/
COPY --from=build --chown=10001:0 /src/demo-orders/target/quarkus-app/quarkus/ quarkus/
USER 10001
EXPOSE 8080
ENV JAVA_OPTS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -Djava.util.logging.manager=org.jboss.logmanager.LogManager" \
    QUARKUS_HTTP_PORT=8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS "http://localhost:${QUARKUS_HTTP_PORT}/q/health/ready" >/dev/null || exit 1
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/quarkus-run.jar"]
