import { esc, graphql, refusalText, restWrite, token, wantsToken } from '../../shared/api.js';
import { csvRows } from './csv.js';
import { uploadRows } from './upload.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const message = refusalText;

/** Shows the API's message; a refusal a token may cure opens the token form. */
function showError(error: unknown): void {
  $('error').textContent = message(error);
  $('error').hidden = false;
  if (wantsToken(error)) {
    $('token-form').hidden = false;
    $<HTMLInputElement>('token').focus();
  }
}

// ---- what the other panels name: farms and coops -------------------------------------------------

interface Farm {
  id: string;
  name: string;
  zone: string;
}
interface Coop {
  id: string;
  name: string;
  farm_id: string;
}
const farms = new Map<string, Farm>();
const coops = new Map<string, Coop>();
const options = (rows: Array<[string, string]>, any?: string) =>
  (any === undefined ? '' : `<option value="">${esc(any)}</option>`) +
  rows.map(([value, label]) => `<option value="${esc(value)}">${esc(label)}</option>`).join('');
const farmOptions = () => [...farms.values()].map((f): [string, string] => [f.id, f.name]);
const coopOptions = () =>
  [...coops.values()].map((c): [string, string] => [
    c.id,
    `${c.name} (${farms.get(c.farm_id)?.name ?? '?'})`,
  ]);

/** Every node of a connection, a page (the API's most, 1000) at a time. */
async function everyNode<T>(
  connection: string,
  selection: string,
  where: { type: string; value: Record<string, unknown> } | null = null,
): Promise<T[]> {
  const nodes: T[] = [];
  let after: string | null = null;
  for (;;) {
    const declared = where ? `, $where: ${where.type}Where` : '';
    const answer: Record<string, { nodes: T[]; pageInfo: { hasNextPage: boolean; endCursor: string } }> =
      await graphql(
        `query ($after: String${declared}) { ${connection}(first: 1000, after: $after${where ? ', where: $where' : ''}) {
          nodes { ${selection} } pageInfo { hasNextPage endCursor } } }`,
        { after, ...(where ? { where: where.value } : {}) },
      );
    const page = answer[connection]!;
    nodes.push(...page.nodes);
    if (!page.pageInfo.hasNextPage) return nodes;
    after = page.pageInfo.endCursor;
  }
}

async function loadNames(): Promise<void> {
  const [farmList, coopList] = await Promise.all([
    everyNode<Farm>('farmsConnection', 'id name zone'),
    everyNode<Coop>('coopsConnection', 'id name farm_id'),
  ]);
  farms.clear();
  coops.clear();
  for (const farm of farmList) farms.set(farm.id, farm);
  for (const coop of coopList) coops.set(coop.id, coop);
  $('hen-coop').innerHTML = options(coopOptions());
  $('report-coop').innerHTML = options(coopOptions());
  await loadReportHens();
}

// ---- KPI cards per farm (the farm output projection) ----------------------------------------------

interface FarmOutput {
  eggs_today: number;
  eggs_week: number;
  eggs_month: number;
  active_hens: number;
  total_hens: number;
  avg_per_hen_per_week: number;
}

async function loadKpis(): Promise<void> {
  const { farmsConnection } = await graphql<{
    farmsConnection: {
      totalCount: number;
      nodes: Array<Farm & { farm_type: string; farmOutput: FarmOutput[] | null }>;
    };
  }>(`{ farmsConnection(first: 200) { totalCount nodes { id name zone farm_type
        farmOutput(limit: 1) { eggs_today eggs_week eggs_month active_hens total_hens avg_per_hen_per_week } } } }`);
  const stat = (key: keyof FarmOutput, label: string, value: number, digits = 0) =>
    `<div><dt>${label}</dt><dd data-stat="${key}" data-value="${value}">${fmt(value, digits)}</dd></div>`;
  const cards = farmsConnection.nodes.map((farm) => {
    const o = farm.farmOutput?.[0];
    return `<article class="card" data-farm="${esc(farm.id)}" aria-labelledby="farm-${esc(farm.id)}">
<h3 id="farm-${esc(farm.id)}">${esc(farm.name)}</h3><p class="muted">${esc(farm.zone)} · ${esc(farm.farm_type.replace('_', ' '))}</p>
<dl>${stat('eggs_week', 'Eggs this week', o?.eggs_week ?? 0)}${stat('eggs_today', 'Today', o?.eggs_today ?? 0)}${stat('eggs_month', 'This month', o?.eggs_month ?? 0)}${stat('active_hens', 'Laying hens', o?.active_hens ?? 0)}${stat('total_hens', 'Hens', o?.total_hens ?? 0)}${stat('avg_per_hen_per_week', 'Eggs per hen per week', o?.avg_per_hen_per_week ?? 0, 2)}</dl></article>`;
  });
  const more = farmsConnection.totalCount - farmsConnection.nodes.length;
  $('farm-cards').innerHTML =
    cards.join('') +
    (more > 0 ? `<p class="muted">and ${fmt(more)} more farms: see the tables.</p>` : '') +
    (cards.length === 0 ? '<p class="muted">No farms yet.</p>' : '');
}

// ---- the tables: <list>Connection with where, orderBy, first/after and totalCount ---------------

type Row = Record<string, unknown>;
interface Column {
  label: string;
  /** The field `orderBy` sorts on, when the API can sort on this column. */
  sort?: string;
  num?: boolean;
  /** The cell's text (escaped when drawn) and, for the tests and the badges, its raw value. */
  value: (row: Row) => string | number | null;
  html?: (row: Row) => string;
}
interface Filter {
  field: string;
  label: string;
  choices?: () => Array<[string, string]>;
}
interface Table {
  label: string;
  /** The GraphQL type: its connection's filter is `<type>Where`. */
  type: string;
  connection: string;
  selection: string;
  columns: Column[];
  filters: Filter[];
  sort: { field: string; dir: 'ASC' | 'DESC' };
}

const get = (row: Row, ...path: string[]): unknown =>
  path.reduce<unknown>((value, key) => (value as Row | null | undefined)?.[key], row);
const first = (row: Row, list: string, field: string) =>
  ((get(row, list) as Row[] | null)?.[0]?.[field] as number | undefined) ?? null;
const enumChoices = (values: string[]) => () => values.map((v): [string, string] => [v, v.replace('_', ' ')]);

function badge(pct: number | null): string {
  if (pct === null) return '<span class="badge">no stock</span>';
  const level = pct >= 90 ? 'full' : pct >= 50 ? 'busy' : 'room';
  return `<span class="badge ${level}" data-utilization="${pct}">${fmt(pct, 0)}% <span class="visually-hidden">(${level})</span></span>`;
}

const tables: Record<string, Table> = {
  coops: {
    label: 'Coops',
    type: 'Coop',
    connection: 'coopsConnection',
    selection: 'id name farm_id coop_type capacity',
    columns: [
      { label: 'Name', value: (r) => get(r, 'name') as string },
      { label: 'Farm', value: (r) => farms.get(get(r, 'farm_id') as string)?.name ?? '' },
      { label: 'Type', sort: 'coop_type', value: (r) => get(r, 'coop_type') as string },
      { label: 'Capacity', sort: 'capacity', num: true, value: (r) => get(r, 'capacity') as number },
    ],
    filters: [
      { field: 'farm_id', label: 'Farm', choices: farmOptions },
      { field: 'coop_type', label: 'Type' },
    ],
    sort: { field: 'capacity', dir: 'DESC' },
  },
  hens: {
    label: 'Hens',
    type: 'Hen',
    connection: 'hensConnection',
    selection: 'id name breed status dob coop_id productivity(limit: 1) { eggs_week total_eggs }',
    columns: [
      { label: 'Name', value: (r) => get(r, 'name') as string },
      { label: 'Coop', value: (r) => coops.get(get(r, 'coop_id') as string)?.name ?? '' },
      { label: 'Breed', sort: 'breed', value: (r) => get(r, 'breed') as string },
      { label: 'Status', sort: 'status', value: (r) => (get(r, 'status') as string | null) ?? 'active' },
      { label: 'Born', sort: 'dob', value: (r) => (get(r, 'dob') as string | null) ?? '' },
      { label: 'Eggs this week', num: true, value: (r) => first(r, 'productivity', 'eggs_week') ?? 0 },
    ],
    filters: [
      { field: 'coop_id', label: 'Coop', choices: coopOptions },
      { field: 'breed', label: 'Breed' },
      { field: 'status', label: 'Status', choices: enumChoices(['active', 'retired', 'deceased']) },
    ],
    sort: { field: 'dob', dir: 'DESC' },
  },
  'lay-reports': {
    label: 'Lay reports',
    type: 'LayReport',
    connection: 'layReportsConnection',
    selection: 'id timestamp eggs quality farm_id hen { name }',
    columns: [
      {
        label: 'Laid at',
        sort: 'timestamp',
        value: (r) => (get(r, 'timestamp') as string).replace('T', ' '),
      },
      { label: 'Hen', value: (r) => (get(r, 'hen', 'name') as string | null) ?? '' },
      { label: 'Farm', value: (r) => farms.get(get(r, 'farm_id') as string)?.name ?? '' },
      { label: 'Eggs', sort: 'eggs', num: true, value: (r) => get(r, 'eggs') as number },
      { label: 'Quality', sort: 'quality', value: (r) => (get(r, 'quality') as string | null) ?? '' },
    ],
    filters: [
      { field: 'farm_id', label: 'Farm', choices: farmOptions },
      {
        field: 'quality',
        label: 'Quality',
        choices: enumChoices(['grade_a', 'grade_b', 'double_yolk', 'cracked']),
      },
    ],
    sort: { field: 'timestamp', dir: 'DESC' },
  },
  containers: {
    label: 'Containers',
    type: 'Container',
    connection: 'containersConnection',
    selection: 'id name container_type zone capacity inventory(limit: 1) { current_eggs utilization_pct }',
    columns: [
      { label: 'Name', value: (r) => get(r, 'name') as string },
      {
        label: 'Type',
        sort: 'container_type',
        value: (r) => (get(r, 'container_type') as string).replace('_', ' '),
      },
      { label: 'Zone', sort: 'zone', value: (r) => get(r, 'zone') as string },
      { label: 'Capacity', sort: 'capacity', num: true, value: (r) => get(r, 'capacity') as number },
      { label: 'Eggs', num: true, value: (r) => first(r, 'inventory', 'current_eggs') ?? 0 },
      {
        label: 'Utilization',
        value: (r) => first(r, 'inventory', 'utilization_pct'),
        html: (r) => badge(first(r, 'inventory', 'utilization_pct')),
      },
    ],
    filters: [
      {
        field: 'container_type',
        label: 'Type',
        choices: enumChoices(['warehouse', 'market_shelf', 'fridge']),
      },
      { field: 'zone', label: 'Zone' },
    ],
    sort: { field: 'capacity', dir: 'DESC' },
  },
};

const PAGE = 25;
const view = {
  table: 'hens',
  where: {} as Record<string, string>,
  sort: { ...tables.hens!.sort },
  after: null as string | null,
  offset: 0,
  next: null as string | null,
};

function renderTabs(): void {
  $('tabs').innerHTML = `<legend class="visually-hidden">Show the table of</legend>${Object.entries(tables)
    .map(
      ([id, t]) =>
        `<button type="button" data-table="${id}" aria-pressed="${id === view.table}">${esc(t.label)}</button>`,
    )
    .join('')}`;
  const table = tables[view.table]!;
  $('filters').innerHTML = `${table.filters
    .map((f) => {
      const id = `filter-${f.field}`;
      const value = view.where[f.field] ?? '';
      const control = f.choices
        ? `<select id="${id}" name="${f.field}">${options(f.choices(), 'Any')}</select>`
        : `<input id="${id}" name="${f.field}" value="${esc(value)}" placeholder="Any" />`;
      return `<div><label for="${id}">${esc(f.label)}</label>${control}</div>`;
    })
    .join('')}<button type="submit">Filter</button>`;
  for (const f of table.filters) {
    const control = $<HTMLInputElement | HTMLSelectElement>(`filter-${f.field}`);
    control.value = view.where[f.field] ?? '';
  }
}

async function loadTable(): Promise<void> {
  const table = tables[view.table]!;
  const where = Object.fromEntries(
    Object.entries(view.where).map(([field, value]) => [field, { eq: value }]),
  );
  const { [table.connection]: page } = await graphql<
    Record<
      string,
      { totalCount: number; nodes: Row[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }
    >
  >(
    `query ($where: ${table.type}Where, $after: String) {
      ${table.connection}(where: $where, orderBy: [{ ${view.sort.field}: ${view.sort.dir} }], first: ${PAGE}, after: $after) {
        totalCount nodes { ${table.selection} } pageInfo { hasNextPage endCursor } } }`,
    { where, after: view.after },
  );
  const head = table.columns
    .map((c) => {
      const sorted = c.sort === view.sort.field;
      const aria = sorted ? ` aria-sort="${view.sort.dir === 'ASC' ? 'ascending' : 'descending'}"` : '';
      const arrow = sorted ? (view.sort.dir === 'ASC' ? ' ▲' : ' ▼') : '';
      const label = c.sort
        ? `<button type="button" data-sort="${c.sort}">${esc(c.label)}${arrow}</button>`
        : esc(c.label);
      return `<th scope="col"${aria}${c.num ? ' class="num"' : ''}>${label}</th>`;
    })
    .join('');
  const body = page!.nodes
    .map(
      (row) =>
        `<tr data-id="${esc(String(row.id))}">${table.columns
          .map((c) => {
            const value = c.value(row);
            const cell = c.html ? c.html(row) : esc(typeof value === 'number' ? fmt(value) : (value ?? ''));
            return `<td${c.num ? ' class="num"' : ''} data-col="${esc(c.sort ?? c.label)}">${cell}</td>`;
          })
          .join('')}</tr>`,
    )
    .join('');
  $('table').innerHTML =
    `<caption class="visually-hidden">${esc(table.label)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
  const total = page!.totalCount;
  const status = $('table-status');
  status.dataset.total = String(total);
  status.textContent =
    total === 0
      ? `No ${table.label.toLowerCase()} match.`
      : `${table.label} ${fmt(view.offset + 1)}–${fmt(view.offset + page!.nodes.length)} of ${fmt(total)}`;
  view.next = page!.pageInfo.hasNextPage ? page!.pageInfo.endCursor : null;
  $<HTMLButtonElement>('next-page').disabled = view.next === null;
  $<HTMLButtonElement>('first-page').disabled = view.after === null;
}

const reloadTable = () => loadTable().catch(showError);

$('tabs').addEventListener('click', (event) => {
  const id = (event.target as HTMLElement).closest('button')?.dataset.table;
  if (!id) return;
  view.table = id;
  view.where = {};
  view.sort = { ...tables[id]!.sort };
  view.after = null;
  view.offset = 0;
  renderTabs();
  void reloadTable();
});
$('table').addEventListener('click', (event) => {
  const field = (event.target as HTMLElement).closest('button')?.dataset.sort;
  if (!field) return;
  view.sort = { field, dir: view.sort.field === field && view.sort.dir === 'ASC' ? 'DESC' : 'ASC' };
  view.after = null;
  view.offset = 0;
  void loadTable()
    .then(() => $('table').querySelector<HTMLButtonElement>(`[data-sort="${field}"]`)?.focus())
    .catch(showError);
});
$('filters').addEventListener('submit', (event) => {
  event.preventDefault();
  const data = new FormData(event.target as HTMLFormElement);
  view.where = {};
  for (const [field, value] of data)
    if (String(value).trim() !== '') view.where[field] = String(value).trim();
  view.after = null;
  view.offset = 0;
  void reloadTable();
});
$('next-page').addEventListener('click', () => {
  if (!view.next) return;
  view.after = view.next;
  view.offset += PAGE;
  void reloadTable();
});
$('first-page').addEventListener('click', () => {
  view.after = null;
  view.offset = 0;
  void reloadTable();
});

// ---- manual entry through the public REST API ---------------------------------------------------

/** Runs a form's write; its outcome line says what was stored or the API's message. */
function onSubmit(form: HTMLFormElement, write: () => Promise<string>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const outcome = form.querySelector<HTMLElement>('.outcome')!;
    outcome.classList.remove('error');
    outcome.textContent = 'Sending…';
    write()
      .then(async (text) => {
        outcome.textContent = text;
        await Promise.all([loadKpis(), loadTable()]);
      })
      .catch((error: unknown) => {
        outcome.classList.add('error');
        outcome.textContent = message(error);
        if (wantsToken(error)) showError(error);
      });
  });
}

const field = (id: string) => $<HTMLInputElement | HTMLSelectElement>(id).value.trim();

onSubmit($<HTMLFormElement>('hen-form'), async () => {
  const body: Record<string, string> = {
    name: field('hen-name'),
    coop_id: field('hen-coop'),
    breed: field('hen-breed'),
    status: field('hen-status'),
  };
  if (field('hen-dob')) body.dob = field('hen-dob');
  const hen = await restWrite<{ id: string; name: string }>('/hen/api', body);
  return `Added ${hen.name} (${hen.id}).`;
});

onSubmit($<HTMLFormElement>('report-form'), async () => {
  const coop = coops.get(field('report-coop'));
  const eggs = field('report-eggs');
  const report = await restWrite<{ id: string; eggs: number }>('/lay_report/api', {
    hen_id: field('report-hen'),
    coop_id: coop?.id,
    farm_id: coop?.farm_id,
    eggs: /^\d+$/.test(eggs) ? Number(eggs) : eggs,
    quality: field('report-quality'),
    timestamp: new Date(field('report-time')).toISOString(),
  });
  return `Added a report of ${report.eggs} eggs (${report.id}).`;
});

/** The hen list of the lay report form: the hens of the coop it names. */
async function loadReportHens(): Promise<void> {
  const coop = field('report-coop');
  if (!coop) return;
  const hens = await everyNode<{ id: string; name: string }>('hensConnection', 'id name', {
    type: 'Hen',
    value: { coop_id: { eq: coop } },
  });
  $('report-hen').innerHTML = options(hens.map((h): [string, string] => [h.id, h.name]));
}
$('report-coop').addEventListener('change', () => void loadReportHens().catch(showError));

/** Now, as the datetime-local input writes it (local time, to the minute). */
function localNow(): string {
  const now = new Date();
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

// ---- CSV upload through the bulk API -------------------------------------------------------------

$('upload-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const entity = field('upload-entity');
  const file = $<HTMLInputElement>('upload-file').files?.[0];
  const bar = $<HTMLProgressElement>('upload-progress');
  const summary = $('upload-summary');
  const refusedList = $('upload-refused');
  const button = $('upload-form').querySelector<HTMLButtonElement>('button[type=submit]')!;
  if (!file) return;
  const say = (total: number, done: number, accepted: number, refused: number, end = '') => {
    summary.dataset.accepted = String(accepted);
    summary.dataset.refused = String(refused);
    summary.textContent = `${fmt(done)} of ${fmt(total)} rows sent: ${fmt(accepted)} stored, ${fmt(refused)} refused${end}`;
  };
  button.disabled = true;
  summary.classList.remove('error');
  delete summary.dataset.done;
  refusedList.innerHTML = '';
  void (async () => {
    let rows: ReturnType<typeof csvRows> = [];
    try {
      rows = csvRows(await file.text(), entity === 'lay_report' ? ['eggs'] : []);
      bar.max = Math.max(1, rows.length);
      bar.value = 0;
      say(rows.length, 0, 0, 0, '…');
      const result = await uploadRows(entity, rows, (done, sofar) => {
        bar.value = done;
        say(rows.length, done, sofar.accepted, sofar.refused.length, done < rows.length ? '…' : '.');
      });
      if (rows.length === 0) say(0, 0, 0, 0, '.');
      refusedList.innerHTML =
        result.refused.length === 0
          ? ''
          : `<table><caption>Refused rows</caption><thead><tr><th scope="col">Line</th><th scope="col">Reason</th></tr></thead><tbody>${result.refused
              .map(
                (r) =>
                  `<tr data-line="${r.line}"><td class="num">${r.line}</td><td>${esc(r.message)}</td></tr>`,
              )
              .join('')}</tbody></table>`;
      summary.dataset.done = 'true';
      await Promise.all([loadKpis(), loadTable(), loadNames()]);
    } catch (error) {
      summary.classList.add('error');
      summary.dataset.done = 'error';
      summary.textContent = `${summary.textContent ?? ''} Stopped: ${message(error)}`.trim();
      if (wantsToken(error)) showError(error);
    } finally {
      button.disabled = false;
    }
  })();
});

// ---- start ----------------------------------------------------------------------------------------

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  token.set($<HTMLInputElement>('token').value);
  $('token-form').hidden = true;
  void start();
});

async function start(): Promise<void> {
  $<HTMLInputElement>('report-time').value = localNow();
  renderTabs();
  try {
    await loadNames();
    renderTabs();
    await Promise.all([loadKpis(), loadTable()]);
    $('error').hidden = true;
    document.body.dataset.ready = 'true';
  } catch (error) {
    showError(error);
  }
}

void start();
