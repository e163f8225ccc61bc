import type pg from 'pg';
import { type FillOptions, type LegacySimulator, random, type SimulatorOptions } from './simulator.js';

const users = ['0055g00000AbCdEAAV', '0055g00000FgHiJAAV', '0055g00000KlMnOAAV'];
const zones = ['North', 'South', 'East', 'West'];

/** The picklist labels the Salesforce org offers (the layer's map knows these). */
const picklists = {
  farmType: ['Megafarm', 'Local Farm', 'Homestead'],
  coopType: ['Standard', 'Mobile', 'Free Range', 'Barn'],
  breed: ['Rhode Island Red', 'Leghorn', 'Buff Orpington', 'Sussex', 'Plymouth Rock', 'Australorp'],
  henStatus: ['Active', 'Active', 'Active', 'Retired', 'Deceased'],
  containerType: ['Warehouse', 'Market Shelf', 'Fridge'],
  consumerType: ['Household', 'Restaurant', 'Bakery'],
  quality: ['Grade A', 'Grade A', 'Grade B', 'Cracked', 'Double Yolk'],
  reason: ['Spoilage', 'Breakage', 'Quality Check'],
  purpose: ['Cooking', 'Baking', 'Resale', 'Raw'],
};

/** Each object type's 3-character key prefix, as an org assigns them to custom objects. */
const prefixes: Record<string, string> = {
  farm__c: 'a00',
  coop__c: 'a01',
  hen__c: 'a02',
  storage_container__c: 'a03',
  consumer_account__c: 'a04',
  lay_report__c: 'a05',
  storage_deposit__c: 'a06',
  storage_withdrawal__c: 'a07',
  container_transfer__c: 'a08',
  consumption_report__c: 'a09',
};
/** Auto-number name formats of the transaction objects. */
const autoNumbers: Record<string, string> = {
  lay_report__c: 'LR',
  storage_deposit__c: 'SD',
  storage_withdrawal__c: 'SW',
  container_transfer__c: 'CT',
  consumption_report__c: 'CR',
};

/**
 * The Salesforce org of the egg economy as a sync tool replicates it into infra/postgres/salesforce.sql:
 * a consistent economy first, then one change at a time (lay reports and stock movements, record
 * updates, records moved to the recycle bin (`isdeleted` turns true), a hen whose coop is synced after
 * it, now and then a picklist label no map knows). Each change is its own transaction.
 */
export class SalesforceSimulator implements LegacySimulator {
  readonly #db: pg.ClientBase;
  readonly #random: () => number;
  readonly #options: SimulatorOptions;
  readonly #next: Record<string, number> = {};
  #farms: string[] = [];
  #hens: { id: string; farm: string }[] = [];
  #containers: string[] = [];
  #consumers: string[] = [];
  #transactions: { table: string; id: string }[] = [];
  readonly counts: Record<string, number> = {};

  constructor(db: pg.ClientBase, options: SimulatorOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.#random = random(options.seed ?? 1);
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)] as T;
  }

  #count(kind: string) {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }

  #now(): string {
    return new Date((this.#options.clock ?? Date.now)()).toISOString();
  }

  #picklist(known: readonly string[]): string {
    return this.#random() < (this.#options.unknownCodeRate ?? 0.01) ? 'Other' : this.#pick(known);
  }

  /** The next 18-character Id of an object type. */
  #id(table: string): string {
    const n = (this.#next[table] ?? 0) + 1;
    this.#next[table] = n;
    return `${prefixes[table]}5g0000${String(n).padStart(6, '0')}AAA`;
  }

  async #insert(table: string, fields: Record<string, unknown>): Promise<string> {
    const id = this.#id(table);
    const name = autoNumbers[table];
    const now = this.#now();
    const user = this.#pick(users);
    const row: Record<string, unknown> = {
      id,
      ...(name ? { name: `${name}-${id.slice(-8, -3).padStart(5, '0')}` } : {}),
      ...fields,
      createddate: now,
      createdbyid: user,
      lastmodifieddate: now,
      lastmodifiedbyid: user,
      systemmodstamp: now,
    };
    const columns = Object.keys(row);
    await this.#db.query(
      `INSERT INTO salesforce.${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      Object.values(row),
    );
    this.#count(table.replace(/__c$/, ''));
    return id;
  }

  async #update(table: string, id: string, fields: Record<string, unknown>): Promise<void> {
    const now = this.#now();
    const row = {
      ...fields,
      lastmodifieddate: now,
      lastmodifiedbyid: this.#pick(users),
      systemmodstamp: now,
    };
    const columns = Object.keys(row);
    await this.#db.query(
      `UPDATE salesforce.${table} SET ${columns.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${columns.length + 1}`,
      [...Object.values(row), id],
    );
  }

  async farm(): Promise<string> {
    const id = await this.#insert('farm__c', {
      name: `Farm ${(this.#next.farm__c ?? 0) + 1}`,
      ownerid: this.#pick(users),
      farm_type__c: this.#picklist(picklists.farmType),
      zone__c: this.#pick(zones),
      owner_name__c: this.#random() < 0.7 ? `Owner ${(this.#next.farm__c ?? 0) + 1}` : null,
    });
    this.#farms.push(id);
    return id;
  }

  async coop(farm: string): Promise<string> {
    return this.#insert('coop__c', this.#coopFields(farm));
  }

  #coopFields(farm: string): Record<string, unknown> {
    return {
      name: `Coop ${(this.#next.coop__c ?? 0) + 1}`,
      farm__c: farm,
      capacity__c: 50 + Math.floor(this.#random() * 200),
      coop_type__c: this.#picklist(picklists.coopType),
    };
  }

  async hen(coop: string, farm: string): Promise<string> {
    const born = new Date(
      Date.UTC(
        2022 + Math.floor(this.#random() * 3),
        Math.floor(this.#random() * 12),
        1 + Math.floor(this.#random() * 28),
      ),
    );
    const id = await this.#insert('hen__c', {
      name: `Hen ${(this.#next.hen__c ?? 0) + 1}`,
      coop__c: coop,
      breed__c: this.#picklist(picklists.breed),
      date_of_birth__c: born.toISOString().slice(0, 10),
      status__c: this.#pick(picklists.henStatus),
    });
    this.#hens.push({ id, farm });
    return id;
  }

  async container(): Promise<string> {
    const id = await this.#insert('storage_container__c', {
      name: `Container ${(this.#next.storage_container__c ?? 0) + 1}`,
      ownerid: this.#pick(users),
      container_type__c: this.#picklist(picklists.containerType),
      capacity__c: 1000 + Math.floor(this.#random() * 9000),
      zone__c: this.#pick(zones),
    });
    this.#containers.push(id);
    return id;
  }

  async consumer(): Promise<string> {
    const id = await this.#insert('consumer_account__c', {
      name: `Consumer ${(this.#next.consumer_account__c ?? 0) + 1}`,
      ownerid: this.#pick(users),
      consumer_type__c: this.#picklist(picklists.consumerType),
      zone__c: this.#pick(zones),
      weekly_demand__c: Math.floor(this.#random() * 500),
    });
    this.#consumers.push(id);
    return id;
  }

  async #transaction(table: string, fields: Record<string, unknown>): Promise<void> {
    this.#transactions.push({ table, id: await this.#insert(table, fields) });
  }

  async layReport(): Promise<void> {
    const hen = this.#pick(this.#hens);
    await this.#transaction('lay_report__c', {
      hen__c: hen.id,
      farm__c: hen.farm,
      egg_count__c: Math.floor(this.#random() * 3),
      quality__c: this.#picklist(picklists.quality),
    });
  }

  async movement(): Promise<void> {
    const kind = this.#random();
    const eggs = 1 + Math.floor(this.#random() * 30);
    if (kind < 0.4) {
      const fromFarm = this.#random() < 0.8;
      await this.#transaction('storage_deposit__c', {
        container__c: this.#pick(this.#containers),
        source_type__c: fromFarm ? 'Farm' : 'Transfer',
        source_id__c: fromFarm ? this.#pick(this.#farms) : this.#pick(this.#containers),
        egg_count__c: eggs,
      });
    } else if (kind < 0.55) {
      await this.#transaction('storage_withdrawal__c', {
        container__c: this.#pick(this.#containers),
        egg_count__c: eggs,
        reason__c: this.#picklist(picklists.reason),
      });
    } else if (kind < 0.75 && this.#containers.length > 1) {
      const from = this.#pick(this.#containers);
      await this.#transaction('container_transfer__c', {
        source_container__c: from,
        dest_container__c: this.#pick(this.#containers.filter((c) => c !== from)),
        egg_count__c: eggs,
      });
    } else {
      await this.#transaction('consumption_report__c', {
        consumer__c: this.#pick(this.#consumers),
        container__c: this.#pick(this.#containers),
        egg_count__c: eggs,
        purpose__c: this.#picklist(picklists.purpose),
      });
    }
  }

  /** The starting economy: farms with coops and hens, containers, consumers, one report per hen. */
  async fill(options: FillOptions): Promise<void> {
    for (let f = 0; f < options.farms; f++) {
      const farm = await this.farm();
      for (let c = 0; c < options.coopsPerFarm; c++) {
        const coop = await this.coop(farm);
        for (let h = 0; h < options.hensPerCoop; h++) await this.hen(coop, farm);
      }
    }
    for (let i = 0; i < options.containers; i++) await this.container();
    for (let i = 0; i < options.consumers; i++) await this.consumer();
    for (let i = 0; i < this.#hens.length; i++) await this.layReport();
  }

  /** One change, as the org's users and integrations make them day to day. */
  async step(): Promise<void> {
    const roll = this.#random();
    if (roll < 0.45) await this.layReport();
    else if (roll < 0.75) await this.movement();
    else if (roll < 0.82) {
      await this.#update('hen__c', this.#pick(this.#hens).id, { status__c: this.#pick(picklists.henStatus) });
      this.#count('hen_update');
    } else if (roll < 0.86) {
      const farm = this.#pick(this.#farms);
      await this.#update('farm__c', farm, {
        name: `Farm ${farm.slice(-9, -3)} ${this.#now().slice(11, 19)}`,
      });
      this.#count('farm_update');
    } else if (roll < 0.91 && this.#transactions.length > 0) {
      // A record moved to the recycle bin: the sync tool keeps the row and sets isdeleted.
      const [gone] = this.#transactions.splice(Math.floor(this.#random() * this.#transactions.length), 1);
      if (gone) {
        await this.#update(gone.table, gone.id, { isdeleted: true });
        this.#count('soft_delete');
      }
    } else if (roll < 0.95) {
      // A new coop whose first hen is synced before the coop itself.
      const farm = this.#pick(this.#farms);
      const coop = `${prefixes.coop__c}5g0000${String((this.#next.coop__c ?? 0) + 1).padStart(6, '0')}AAA`;
      await this.hen(coop, farm);
      await this.coop(farm);
    } else if (roll < 0.97) {
      await this.farm();
    } else if (roll < 0.985) {
      await this.container();
    } else {
      await this.consumer();
    }
  }
}
