-- The Salesforce-shaped legacy system of record (custom objects as a Heroku-Connect-style sync
-- replicates them; docs: legacy.md in the design notes, README "Legacy systems of record"). Lower-case
-- names as such tools write them; every object has id (18 characters, a key prefix per object type),
-- name, createddate, createdbyid, lastmodifieddate, lastmodifiedbyid, systemmodstamp and isdeleted
-- (a soft delete: isdeleted turning true is the delete). Picklists hold Title Case labels.
CREATE SCHEMA IF NOT EXISTS salesforce;
SET search_path = salesforce;

CREATE TABLE IF NOT EXISTS farm__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL, ownerid CHAR(18),
  farm_type__c VARCHAR(40), zone__c VARCHAR(40), owner_name__c VARCHAR(80),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS coop__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  farm__c CHAR(18), capacity__c NUMERIC(18, 0), coop_type__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS hen__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  coop__c CHAR(18), breed__c VARCHAR(40), date_of_birth__c DATE, status__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS storage_container__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL, ownerid CHAR(18),
  container_type__c VARCHAR(40), capacity__c NUMERIC(18, 0), zone__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS consumer_account__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL, ownerid CHAR(18),
  consumer_type__c VARCHAR(40), zone__c VARCHAR(40), weekly_demand__c NUMERIC(18, 0),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

-- Transaction objects: auto-number names (LR-00001); the event time is createddate.
CREATE TABLE IF NOT EXISTS lay_report__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  hen__c CHAR(18), farm__c CHAR(18), egg_count__c NUMERIC(18, 0), quality__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

-- source_id__c: the deposit's source (a Farm__c for a farm, a Storage_Container__c for a transfer).
CREATE TABLE IF NOT EXISTS storage_deposit__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  container__c CHAR(18), source_type__c VARCHAR(40), source_id__c CHAR(18), egg_count__c NUMERIC(18, 0),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS storage_withdrawal__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  container__c CHAR(18), egg_count__c NUMERIC(18, 0), reason__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS container_transfer__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  source_container__c CHAR(18), dest_container__c CHAR(18), egg_count__c NUMERIC(18, 0),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);

CREATE TABLE IF NOT EXISTS consumption_report__c (
  id CHAR(18) PRIMARY KEY, name VARCHAR(80) NOT NULL,
  consumer__c CHAR(18), container__c CHAR(18), egg_count__c NUMERIC(18, 0), purpose__c VARCHAR(40),
  createddate TIMESTAMPTZ NOT NULL, createdbyid CHAR(18) NOT NULL, lastmodifieddate TIMESTAMPTZ NOT NULL,
  lastmodifiedbyid CHAR(18) NOT NULL, systemmodstamp TIMESTAMPTZ NOT NULL, isdeleted BOOLEAN NOT NULL DEFAULT false);
