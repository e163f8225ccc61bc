import type pg from 'pg';

/** A small seeded PRNG (mulberry32): the same seed makes the same economy and the same changes. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const users = ['JSMITH', 'MMUELLER', 'KWAGNER', 'BATCHJOB', 'SLT_REPL'];
const zones = ['NORTH', 'SOUTH', 'EAST', 'WEST'];

/** The legacy codes the SAP applications write (the layer's map knows these). */
const codes = {
  farmType: ['M', 'L', 'H'],
  coopType: ['STD', 'MOB', 'FRE', 'BAT'],
  breed: ['RIR', 'LEG', 'ORP', 'SUS', 'PLY', 'AUS'],
  henStatus: ['A', 'A', 'A', 'R', 'D'],
  containerType: ['W', 'M', 'F'],
  consumerType: ['H', 'R', 'B'],
  quality: ['A', 'A', 'B', 'C', 'D'],
  reason: ['S', 'B', 'Q'],
  purpose: ['C', 'B', 'R', 'W'],
};

export interface SimulatorOptions {
  readonly seed?: number;
  /** Share of changes that carry a code no map knows (a data problem the layer must surface). */
  readonly unknownCodeRate?: number;
  /** Share of changes written in another SAP client (MANDT 200: test data the layer ignores). */
  readonly otherClientRate?: number;
  /** The time the legacy applications think it is (their ERDAT/ERZET and posting dates). */
  readonly clock?: () => number;
}

/** What `pnpm legacy:simulate` drives, whichever source it writes. */
export interface LegacySimulator {
  /** Changes made per kind. */
  readonly counts: Record<string, number>;
  fill(options: FillOptions): Promise<void>;
  step(): Promise<void>;
}

export interface FillOptions {
  readonly farms: number;
  readonly coopsPerFarm: number;
  readonly hensPerCoop: number;
  readonly containers: number;
  readonly consumers: number;
}

/**
 * The SAP applications of the egg economy, as they write the Z-tables of infra/postgres/sap.sql: a
 * consistent economy first, then one change at a time (lay reports and goods movements, master data
 * updates, cancelled movements deleted, a new coop whose hens are booked before the coop itself, now
 * and then a code no map knows and rows of another client). Each change is its own transaction, as
 * each SAP dialog step commits alone.
 */
export class SapSimulator implements LegacySimulator {
  readonly #db: pg.ClientBase;
  readonly #random: () => number;
  readonly #options: SimulatorOptions;
  #next = { werks: 1000, stall: 1, hen: 1, container: 1, consumer: 1, aufnr: 1, mblnr: 4_900_000_001 };
  #farms: string[] = [];
  #coops: { stall: string; werks: string }[] = [];
  #hens: { equnr: string; werks: string }[] = [];
  #containers: string[] = [];
  #consumers: string[] = [];
  #movements: { table: string; mblnr: string; mjahr: string }[] = [];
  /** Changes made per kind, for the command's summary and the tests. */
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

  /** ERDAT/ERZET-style date and time of now. */
  #stamp(): [string, string] {
    const iso = new Date((this.#options.clock ?? Date.now)()).toISOString();
    return [iso.slice(0, 10).replaceAll('-', ''), iso.slice(11, 19).replaceAll(':', '')];
  }

  #admin(): unknown[] {
    const [date, time] = this.#stamp();
    return [this.#pick(users), date, time];
  }

  #client(): string {
    return this.#random() < (this.#options.otherClientRate ?? 0.02) ? '200' : '100';
  }

  #code(known: readonly string[]): string {
    return this.#random() < (this.#options.unknownCodeRate ?? 0.01) ? 'Z' : this.#pick(known);
  }

  async #insert(table: string, values: unknown[]): Promise<void> {
    const marks = values.map((_, i) => `$${i + 1}`).join(', ');
    await this.#db.query(`INSERT INTO sap.${table} VALUES (${marks}, NULL, NULL, NULL)`, values);
  }

  async farm(client = '100'): Promise<string> {
    const werks = pad(this.#next.werks++, 4);
    await this.#insert('zfarm_mstr', [
      client,
      werks,
      '1000',
      `Hof ${werks}`,
      this.#code(codes.farmType),
      this.#pick(zones),
      this.#random() < 0.7 ? `Bauer ${werks}` : null,
      ...this.#admin(),
    ]);
    if (client === '100') this.#farms.push(werks);
    this.#count(client === '100' ? 'farm' : 'other_client');
    return werks;
  }

  async coop(werks: string): Promise<string> {
    const stall = `S${pad(this.#next.stall++, 7)}`;
    await this.#insert('zstall_mstr', [
      '100',
      stall,
      werks,
      `Stall ${stall}`,
      50 + Math.floor(this.#random() * 200),
      this.#code(codes.coopType),
      ...this.#admin(),
    ]);
    this.#coops.push({ stall, werks });
    this.#count('coop');
    return stall;
  }

  async hen(coop: { stall: string; werks: string }): Promise<string> {
    const equnr = pad(this.#next.hen++, 18);
    const born = new Date(
      Date.UTC(
        2022 + Math.floor(this.#random() * 3),
        Math.floor(this.#random() * 12),
        1 + Math.floor(this.#random() * 28),
      ),
    );
    await this.#insert('zequi_hen', [
      '100',
      equnr,
      coop.stall,
      `Henne ${equnr.slice(-5)}`,
      this.#code(codes.breed),
      born.toISOString().slice(0, 10).replaceAll('-', ''),
      this.#pick(codes.henStatus),
      ...this.#admin(),
    ]);
    this.#hens.push({ equnr, werks: coop.werks });
    this.#count('hen');
    return equnr;
  }

  async container(): Promise<string> {
    const nr = `C${pad(this.#next.container++, 7)}`;
    await this.#insert('zbehaelt_mstr', [
      '100',
      nr,
      `Lager ${nr}`,
      this.#code(codes.containerType),
      1000 + Math.floor(this.#random() * 9000),
      this.#pick(zones),
      'L001',
      ...this.#admin(),
    ]);
    this.#containers.push(nr);
    this.#count('container');
    return nr;
  }

  async consumer(): Promise<string> {
    const kunnr = pad(this.#next.consumer++, 10);
    await this.#insert('zkunde_vbr', [
      '100',
      kunnr,
      `Kunde ${kunnr.slice(-4)}`,
      this.#code(codes.consumerType),
      this.#pick(zones),
      Math.floor(this.#random() * 500),
      ...this.#admin(),
    ]);
    this.#consumers.push(kunnr);
    this.#count('consumer');
    return kunnr;
  }

  async layReport(): Promise<void> {
    const hen = this.#pick(this.#hens);
    const [date, time] = this.#stamp();
    await this.#insert('zafru_lege', [
      '100',
      pad(this.#next.aufnr++, 12),
      hen.equnr,
      hen.werks,
      '1000',
      Math.floor(this.#random() * 3),
      date,
      time,
      this.#code(codes.quality),
      ...this.#admin(),
    ]);
    this.#count('lay_report');
  }

  async #movement(table: string, values: (mblnr: string, mjahr: string) => unknown[]): Promise<void> {
    const mblnr = String(this.#next.mblnr++);
    const [date] = this.#stamp();
    const mjahr = date.slice(0, 4);
    await this.#insert(table, values(mblnr, mjahr));
    this.#movements.push({ table, mblnr, mjahr });
    this.#count(table);
  }

  async movement(): Promise<void> {
    const [date, time] = this.#stamp();
    const kind = this.#random();
    const eggs = 1 + Math.floor(this.#random() * 30);
    if (kind < 0.4) {
      const fromFarm = this.#random() < 0.8;
      await this.#movement('zmseg_101', (mblnr, mjahr) => [
        '100',
        mblnr,
        mjahr,
        this.#pick(this.#containers),
        '1000',
        fromFarm ? 'F' : 'T',
        fromFarm ? this.#pick(this.#farms) : this.#pick(this.#containers),
        eggs,
        date,
        time,
        ...this.#admin(),
      ]);
    } else if (kind < 0.55) {
      await this.#movement('zmseg_201', (mblnr, mjahr) => [
        '100',
        mblnr,
        mjahr,
        this.#pick(this.#containers),
        '1000',
        eggs,
        this.#code(codes.reason),
        date,
        time,
        ...this.#admin(),
      ]);
    } else if (kind < 0.75 && this.#containers.length > 1) {
      const from = this.#pick(this.#containers);
      const to = this.#pick(this.#containers.filter((c) => c !== from));
      await this.#movement('zmseg_301', (mblnr, mjahr) => [
        '100',
        mblnr,
        mjahr,
        from,
        to,
        '1000',
        eggs,
        date,
        time,
        ...this.#admin(),
      ]);
    } else {
      await this.#movement('zmseg_261', (mblnr, mjahr) => [
        '100',
        mblnr,
        mjahr,
        this.#pick(this.#consumers),
        this.#pick(this.#containers),
        '1000',
        eggs,
        this.#code(codes.purpose),
        date,
        time,
        ...this.#admin(),
      ]);
    }
  }

  /** The starting economy: farms with coops and hens, containers, consumers, one report per hen. */
  async fill(options: FillOptions): Promise<void> {
    for (let f = 0; f < options.farms; f++) {
      const werks = await this.farm();
      for (let c = 0; c < options.coopsPerFarm; c++) {
        const stall = await this.coop(werks);
        for (let h = 0; h < options.hensPerCoop; h++) await this.hen({ stall, werks });
      }
    }
    for (let i = 0; i < options.containers; i++) await this.container();
    for (let i = 0; i < options.consumers; i++) await this.consumer();
    for (let i = 0; i < this.#hens.length; i++) await this.layReport();
  }

  /** One change, as the legacy applications make them day to day. */
  async step(): Promise<void> {
    const [date, time] = this.#stamp();
    const roll = this.#random();
    if (roll < 0.45) await this.layReport();
    else if (roll < 0.75) await this.movement();
    else if (roll < 0.82) {
      const hen = this.#pick(this.#hens);
      await this.#db.query(
        `UPDATE sap.zequi_hen SET stat_cd = $1, aenam = $2, aedat = $3, aezet = $4 WHERE mandt = '100' AND equnr = $5`,
        [this.#pick(codes.henStatus), this.#pick(users), date, time, hen.equnr],
      );
      this.#count('hen_update');
    } else if (roll < 0.86) {
      const werks = this.#pick(this.#farms);
      await this.#db.query(
        `UPDATE sap.zfarm_mstr SET farm_nm = $1, aenam = $2, aedat = $3, aezet = $4 WHERE mandt = '100' AND werks = $5`,
        [`Hof ${werks} ${time}`, this.#pick(users), date, time, werks],
      );
      this.#count('farm_update');
    } else if (roll < 0.91 && this.#movements.length > 0) {
      // A cancelled goods movement: the document row is deleted.
      const index = Math.floor(this.#random() * this.#movements.length);
      const [gone] = this.#movements.splice(index, 1);
      if (gone) {
        await this.#db.query(
          `DELETE FROM sap.${gone.table} WHERE mandt = '100' AND mblnr = $1 AND mjahr = $2`,
          [gone.mblnr, gone.mjahr],
        );
        this.#count('movement_delete');
      }
    } else if (roll < 0.95) {
      // A new coop whose first hen is booked before the coop itself.
      const werks = this.#pick(this.#farms);
      const stall = `S${pad(this.#next.stall, 7)}`;
      await this.hen({ stall, werks });
      await this.coop(werks);
    } else if (roll < 0.97) {
      await this.farm(this.#client());
    } else if (roll < 0.985) {
      await this.container();
    } else {
      await this.consumer();
    }
  }
}
