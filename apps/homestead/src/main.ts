import { ApiError, authHeaders, esc, graphql, token, wantsToken } from '../../shared/api.js';

/** The grades a lay report takes (`eggQualities` of @eggmesh/schema; the API refuses any other). */
const eggQualities = ['grade_a', 'grade_b', 'double_yolk', 'cracked'] as const;

// ---- what this phone keeps ------------------------------------------------------------------------

interface Week {
  eggs_today: number | null;
  eggs_week: number | null;
}
interface Hen {
  id: string;
  name: string;
  breed: string;
  productivity: Week[] | null;
}
interface Coop {
  id: string;
  name: string;
  hens: Hen[] | null;
}
interface FarmView {
  id: string;
  name: string;
  farmOutput: Array<Week & { active_hens: number | null }> | null;
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
    ? `This week: ${output.eggs_week ?? 0} eggs from ${output.active_hens ?? 0} laying hens · today: ${output.eggs_today ?? 0}`
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
<button type="button" class="primary" data-log>Log eggs</button></div></article>`,
          )
          .join('')}</section>`,
    )
    .join('');
}

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
      `query ($id: ID!) { farm(id: $id) { id name farmOutput(limit: 1) { eggs_today eggs_week active_hens }
        coops { id name hens { id name breed productivity(limit: 1) { eggs_today eggs_week } } } } }`,
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
$('change-farm').addEventListener('click', () => {
  store.drop('farm');
  $('hens').innerHTML = '';
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
