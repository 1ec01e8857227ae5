-- One-shot set-up of the SQL Server in compose.yaml (run by the mssql-init service with sqlcmd,
-- variables DB_NAME, APP_LOGIN, APP_PASSWORD). Idempotent: a second `up` changes nothing.
-- relay-service and demo-orders share this one database, so an order and its outbox job commit in
-- one transaction; each creates its own tables at start-up (Flyway, separate history tables).
IF DB_ID(N'$(DB_NAME)') IS NULL
  CREATE DATABASE [$(DB_NAME)];
GO
IF SUSER_ID(N'$(APP_LOGIN)') IS NULL
  CREATE LOGIN [$(APP_LOGIN)] WITH PASSWORD = N'$(APP_PASSWORD)', CHECK_POLICY = OFF,
    DEFAULT_DATABASE = [$(DB_NAME)];
GO
USE [$(DB_NAME)];
GO
IF USER_ID(N'$(APP_LOGIN)') IS NULL
  CREATE USER [$(APP_LOGIN)] FOR LOGIN [$(APP_LOGIN)];
GO
-- The services create and migrate their tables, so the application user owns the database's schema.
ALTER ROLE db_owner ADD MEMBER [$(APP_LOGIN)];
GO
