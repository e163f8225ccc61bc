import {
  ApiError,
  authHeaders,
  esc,
  graphql,
  refusalText,
  restWrite,
  token,
  wantsToken,
} from '../../shared/api.js';

/** The grades a lay report takes (`eggQualities` of @eggmesh/schema; the API refuses any other). */
const eggQualities = ['grade_a', 'grade_b', 'double_yolk', 'cracked'] as const;

// ---- what this phone keeps ------------------------------------------------------------------------

interface Week {
  eggs_today: number | null;
  eggs_week: number | null;
}
interface HenWeek extends Week {
  eggs_month: number | null;
  total_eggs: number | null;
  avg_per_week: number | null;
  quality_rate: number | null;
}
interface Hen {
  id: string;
  name: string;
  breed: string;
  productivity: HenWeek[] | null;
}
interface Coop {
  id: string;
  name: string;
  hens: Hen[] | null;
}
interface FarmView {
  id: string;
  name: string;
  farmOutput: Array<
    Week & { eggs_month: number | null; active_hens: number | null; avg_per_hen_per_week: number | null }
  > | null;
  coops: Coop[] | null;
}
/** A lay report as the API takes it, with the id this phone chose: sending it twice stores it once. */
interface QueuedReport {
  id: string;
  hen_id: string;
  coop_id: string;
  farm_id: string;
  eggs: number;
  quality: string;
  timestamp: string;
}

const store = {
  get: <T>(key: string): T | undefined => {
    const text = localStorage.getItem(`homestead.${key}`);
    return text === null ? undefined : (JSON.parse(text) as T);
  },
  set: (key: string, value: unknown) => localStorage.setItem(`homestead.${key}`, JSON.stringify(value)),
  drop: (key: string) => localStorage.removeItem(`homestead.${key}`),
};
const queue = () => store.get<QueuedReport[]>('queue') ?? [];

/** A random (version 4) UUID; crypto.randomUUID exists in secure contexts only, a phone on plain http is not one. */
function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// ---- the page ------------------------------------------------------------------------------------

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function showError(error: unknown): void {
  $('error').textContent = error instanceof Error ? error.message : String(error);
  $('error').hidden = false;
  if (wantsToken(error)) {
    $('token-form').hidden = false;
    $<HTMLInputElement>('token').focus();
  }
}

function renderNetwork(): void {
  const waiting = queue().length;
  const line = $('network');
  line.dataset.queued = String(waiting);
  const state = navigator.onLine ? 'Online' : 'Offline';
  line.textContent =
    waiting === 0
      ? `${state} · every report sent`
      : `${state} · ${waiting} report${waiting === 1 ? '' : 's'} waiting to be sent`;
}

function renderFarm(farm: FarmView): void {
  $('title').textContent = farm.name;
  $('change-farm').hidden = false;
  // The week from the projections, as last read (the queue's reports count once the API has them).
  const output = farm.farmOutput?.[0];
  const week = $('week');
  week.hidden = !output;
  week.dataset.eggsWeek = String(output?.eggs_week ?? 0);
  week.textContent = output
    ? `This week: ${output.eggs_week ?? 0} eggs from ${output.active_hens ?? 0} laying hens (${(output.avg_per_hen_per_week ?? 0).toFixed(1)} per hen) · today: ${output.eggs_today ?? 0} · this month: ${output.eggs_month ?? 0}`
    : '';
  const options = eggQualities.map((q) => `<option value="${q}">${q.replace('_', ' ')}</option>`).join('');
  $('hens').innerHTML = (farm.coops ?? [])
    .map(
      (coop) =>
        `<section aria-labelledby="coop-${coop.id}"><h2 id="coop-${coop.id}">${esc(coop.name)}</h2>${(
          coop.hens ?? []
        )
          .map(
            (
              hen,
            ) => `<article class="card" data-hen="${hen.id}" data-coop="${coop.id}" aria-labelledby="hen-${hen.id}">
<h3 id="hen-${hen.id}">${esc(hen.name)} <span class="meta">${esc(hen.breed)}</span></h3>
<p class="meta" data-week="${hen.productivity?.[0]?.eggs_week ?? 0}">This week ${hen.productivity?.[0]?.eggs_week ?? 0} · today ${hen.productivity?.[0]?.eggs_today ?? 0}</p>
<div class="counter"><button type="button" data-step="-1" aria-label="One egg fewer for ${esc(hen.name)}">−</button>
<output aria-live="polite" aria-label="Eggs to log for ${esc(hen.name)}">1</output>
<button type="button" data-step="1" aria-label="One egg more for ${esc(hen.name)}">+</button></div>
<div class="row"><label for="q-${hen.id}">Quality</label><select id="q-${hen.id}">${options}</select>
<button type="button" class="primary" data-log>Log eggs</button></div>
<details data-history><summary>History</summary>${henTotals(hen.productivity?.[0])}<div data-reports></div></details></article>`,
          )
          .join('')}</section>`,
    )
    .join('');
  $('new-hen-coop').innerHTML = (farm.coops ?? [])
    .map((coop) => `<option value="${coop.id}">${esc(coop.name)}</option>`)
    .join('');
  $('add').hidden = false;
}

/** A hen's totals from the hen productivity projection. */
function henTotals(p: HenWeek | undefined): string {
  if (!p) return '<p class="meta">No eggs logged yet.</p>';
  const rate = Math.round((p.quality_rate ?? 0) * 100);
  return `<p class="meta" data-total="${p.total_eggs ?? 0}">This month ${p.eggs_month ?? 0} · ${(p.avg_per_week ?? 0).toFixed(1)} a week · ${p.total_eggs ?? 0} in all · ${rate}% grade A</p>`;
}

interface Report {
  id: string;
  timestamp: string;
  eggs: number;
  quality: string | null;
}

/** The hen's latest lay reports (kept here too, so the history opens offline as last read). */
async function showHistory(card: HTMLElement): Promise<void> {
  const hen = card.dataset.hen!;
  const box = card.querySelector<HTMLElement>('[data-reports]')!;
  const draw = (reports: Report[], total: number) => {
    box.dataset.count = String(total);
    box.innerHTML =
      reports.length === 0
        ? '<p class="meta">No lay reports yet.</p>'
        : `<table><caption class="meta">Latest ${reports.length} of ${total} reports</caption><thead><tr><th scope="col">When</th><th scope="col">Eggs</th><th scope="col">Quality</th></tr></thead><tbody>${reports
            .map(
              (r) =>
                `<tr data-report="${esc(r.id)}"><td>${esc(r.timestamp.slice(0, 16).replace('T', ' '))}</td><td>${r.eggs}</td><td>${esc((r.quality ?? '').replace('_', ' '))}</td></tr>`,
            )
            .join('')}</tbody></table>`;
  };
  const kept = store.get<{ reports: Report[]; total: number }>(`history.${hen}`);
  if (kept) draw(kept.reports, kept.total);
  try {
    const { layReportsConnection: page } = await graphql<{
      layReportsConnection: { totalCount: number; nodes: Report[] };
    }>(
      `query ($hen: ID) { layReportsConnection(where: { hen_id: { eq: $hen } }, orderBy: [{ timestamp: DESC }], first: 10) {
        totalCount nodes { id timestamp eggs quality } } }`,
      { hen },
    );
    store.set(`history.${hen}`, { reports: page.nodes, total: page.totalCount });
    draw(page.nodes, page.totalCount);
  } catch (error) {
    if (!kept) box.innerHTML = `<p class="meta">${esc(refusalText(error))}</p>`;
    if (wantsToken(error)) showError(error);
  }
}

$('hens').addEventListener(
  'toggle',
  (event) => {
    const details = event.target as HTMLDetailsElement;
    const card = details.closest<HTMLElement>('[data-hen]');
    if (details.open && card) void showHistory(card);
  },
  true,
);

$('hens').addEventListener('click', (event) => {
  const button = (event.target as HTMLElement).closest('button');
  const card = button?.closest<HTMLElement>('[data-hen]');
  if (!button || !card) return;
  const output = card.querySelector('output')!;
  const count = Number(output.textContent);
  if (button.dataset.step) {
    output.textContent = String(Math.max(0, Math.min(99, count + Number(button.dataset.step))));
    return;
  }
  const farm = store.get<string>('farm')!;
  const report: QueuedReport = {
    id: uuid(),
    hen_id: card.dataset.hen!,
    coop_id: card.dataset.coop!,
    farm_id: farm,
    eggs: count,
    quality: card.querySelector('select')!.value,
    timestamp: new Date().toISOString(),
  };
  store.set('queue', [...queue(), report]);
  output.textContent = '1';
  renderNetwork();
  void flush();
});

let sending = false;

/**
 * Sends the queued reports in order; stops at the first the network or the server could not take, to
 * try again later. A report the server already has (409, a resend) is done, never a duplicate.
 */
async function flush(): Promise<void> {
  // Offline as far as the browser knows: nothing is tried until its `online` event sends the queue.
  if (sending || !navigator.onLine) return;
  sending = true;
  try {
    for (const report of queue()) {
      let response: Response;
      try {
        response = await fetch('/lay_report/api', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authHeaders() },
          body: JSON.stringify(report),
        });
      } catch {
        return;
      }
      const body = (await response.json().catch(() => ({}))) as { error?: string; code?: string };
      if (response.status >= 500 || response.status === 429 || response.status === 408) return;
      if (response.status === 401 || response.status === 403) {
        showError(new ApiError(body.error ?? response.statusText, response.status));
        return;
      }
      store.set(
        'queue',
        queue().filter((r) => r.id !== report.id),
      );
      if (response.status !== 201 && body.code !== 'EGGMESH_ALREADY_EXISTS') {
        showError(
          new Error(`A report of ${report.eggs} eggs was refused: ${body.error ?? response.statusText}`),
        );
      }
    }
  } finally {
    sending = false;
    renderNetwork();
  }
}

async function loadFarm(farmId: string): Promise<void> {
  const cached = store.get<FarmView>(`farm.${farmId}`);
  if (cached) renderFarm(cached);
  try {
    const { farm } = await graphql<{ farm: FarmView | null }>(
      `query ($id: ID!) { farm(id: $id) { id name farmOutput(limit: 1) { eggs_today eggs_week eggs_month active_hens avg_per_hen_per_week }
        coops { id name hens { id name breed
          productivity(limit: 1) { eggs_today eggs_week eggs_month total_eggs avg_per_week quality_rate } } } } }`,
      { id: farmId },
    );
    if (!farm) throw new Error('That farm no longer exists: pick yours again.');
    store.set(`farm.${farmId}`, farm);
    renderFarm(farm);
    $('error').hidden = true;
  } catch (error) {
    // Offline with the hens already kept here: the cards work, the reports wait in the queue.
    if (!cached || error instanceof ApiError) showError(error);
  }
}

async function pickFarm(): Promise<void> {
  try {
    const { farms } = await graphql<{ farms: Array<{ id: string; name: string; zone: string }> }>(
      '{ farms(limit: 10000) { id name zone } }',
    );
    $('farm').innerHTML = farms
      .map((f) => `<option value="${f.id}">${esc(f.name)} (${esc(f.zone)})</option>`)
      .join('');
    $('farm-form').hidden = false;
    $('error').hidden = true;
  } catch (error) {
    showError(error);
  }
}

$('farm-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = $<HTMLSelectElement>('farm').value;
  store.set('farm', id);
  $('farm-form').hidden = true;
  void loadFarm(id);
});
/** A coop or a hen through the public REST API (they need the network: only lay reports wait in a queue). */
function onAdd(form: HTMLFormElement, body: () => Record<string, unknown>, entity: 'coop' | 'hen'): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const outcome = form.querySelector<HTMLElement>('.outcome')!;
    outcome.textContent = 'Sending…';
    restWrite<{ id: string; name: string }>(`/${entity}/api`, body())
      .then(async (created) => {
        form.reset();
        outcome.textContent = `Added ${created.name}.`;
        await loadFarm(store.get<string>('farm')!);
      })
      .catch((error: unknown) => {
        outcome.textContent = navigator.onLine
          ? refusalText(error)
          : 'Adding needs the network: try again once online.';
        if (wantsToken(error)) showError(error);
      });
  });
}
const value = (id: string) => $<HTMLInputElement | HTMLSelectElement>(id).value.trim();
onAdd(
  $<HTMLFormElement>('coop-form'),
  () => ({
    name: value('new-coop-name'),
    farm_id: store.get<string>('farm'),
    capacity: Number(value('new-coop-capacity')),
    coop_type: value('new-coop-type'),
  }),
  'coop',
);
onAdd(
  $<HTMLFormElement>('hen-form'),
  () => ({ name: value('new-hen-name'), coop_id: value('new-hen-coop'), breed: value('new-hen-breed') }),
  'hen',
);

$('change-farm').addEventListener('click', () => {
  store.drop('farm');
  $('hens').innerHTML = '';
  $('add').hidden = true;
  $('change-farm').hidden = true;
  void pickFarm();
});
$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  token.set($<HTMLInputElement>('token').value);
  $('token-form').hidden = true;
  void start();
});

window.addEventListener('online', () => void flush());
window.addEventListener('offline', renderNetwork);
setInterval(() => void flush(), 15_000);

async function start(): Promise<void> {
  renderNetwork();
  const farm = store.get<string>('farm');
  await (farm ? loadFarm(farm) : pickFarm());
  await flush();
}

if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/homestead/sw.js', { scope: '/homestead/' }).catch(showError);
}
void start();
