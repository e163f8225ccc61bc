import { ApiError, esc, isTransient, token, wantsToken } from '../../shared/api.js';
import { every, liveClient, projectionPosition } from './api.js';
import { bars, fmt } from './charts.js';
import {
  type ConsumptionReport,
  type Container,
  type ContainerInventory,
  type Economy,
  type Farm,
  type FarmOutput,
  type HenProductivity,
  view,
  zonesOf,
} from './model.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const zoneSelect = $<HTMLSelectElement>('zone');
const statusLine = $('status');
const errorLine = $('error');
const tokenForm = $<HTMLFormElement>('token-form');

let economy: Economy | undefined;
let zone = new URLSearchParams(location.search).get('zone') ?? '';

const FARM_OUTPUT = 'farm_id farm_type eggs_week active_hens';
const HEN_PRODUCTIVITY = 'hen_id farm_id eggs_week';
const CONTAINER_INVENTORY = 'container_id current_eggs utilization_pct';

const byKey = <T, K extends keyof T>(rows: T[], key: K) => new Map(rows.map((r) => [String(r[key]), r]));

/** The actors and events (the projections arrive with the snapshot and then over the subscription). */
async function readLists() {
  const [farms, hens, containers, consumption] = await Promise.all([
    every<Farm>('farms', 'name farm_type zone'),
    every<{ id: string; name: string }>('hens', 'name'),
    every<Container>('containers', 'name zone'),
    every<ConsumptionReport>('consumptionReports', 'container_id eggs timestamp purpose'),
  ]);
  return {
    farms: byKey(farms, 'id'),
    hens: new Map(hens.map((h) => [h.id, h.name])),
    containers: byKey(containers, 'id'),
    consumption,
  };
}

async function readSnapshot(): Promise<Economy> {
  const [lists, outputs, hens, inventories] = await Promise.all([
    readLists(),
    every<FarmOutput & { id: string }>('farmOutputs', FARM_OUTPUT),
    every<HenProductivity & { id: string }>('henProductivities', HEN_PRODUCTIVITY),
    every<ContainerInventory & { id: string }>('containerInventories', CONTAINER_INVENTORY),
  ]);
  return {
    ...lists,
    farmOutput: byKey(outputs, 'farm_id'),
    henProductivity: byKey(hens, 'hen_id'),
    containerInventory: byKey(inventories, 'container_id'),
  };
}

function stat(key: string, label: string, value: number, digits = 0): string {
  return `<div class="card"><dt>${label}</dt><dd data-stat="${key}" data-value="${value}">${fmt(value, digits)}</dd></div>`;
}

function render(): void {
  if (!economy) return;
  const v = view(economy, zone);
  $('summary').innerHTML = [
    stat('farms', 'Farms', v.farms),
    stat('eggs-week', 'Eggs this week', v.eggsWeek),
    stat('active-hens', 'Active hens', v.activeHens),
    stat('eggs-per-hen', 'Eggs per hen per week', v.eggsPerHen, 2),
  ].join('');
  $('eggs-by-type').innerHTML = bars(v.eggsByType, { empty: 'No eggs this week.' });
  $('farm-types').innerHTML = bars(v.farmTypes, { empty: 'No farms.' });
  $('containers').innerHTML = bars(v.utilization, { max: 100, unit: '%', empty: 'No containers.' });
  $('purposes').innerHTML = bars(v.purposes, { empty: 'No consumption reported.' });
  $('top-farms').innerHTML = bars(v.topFarms, { empty: 'No farms.' });
  $('top-hens').innerHTML = bars(v.topHens, { empty: 'No hens.' });
  $('latest').innerHTML =
    v.latest.length === 0
      ? '<p class="empty">No consumption reported.</p>'
      : `<div class="scroll"><table><thead><tr><th scope="col">When (UTC)</th><th scope="col">Container</th><th scope="col">Purpose</th><th scope="col" class="num">Eggs</th></tr></thead><tbody>${v.latest
          .map(
            (r) =>
              `<tr><td>${esc(r.timestamp.slice(0, 16).replace('T', ' '))}</td><td>${esc(r.container)}</td><td>${esc(r.purpose ?? 'unspecified')}</td><td class="num">${fmt(r.eggs ?? 0)}</td></tr>`,
          )
          .join('')}</tbody></table></div>`;
}

function renderZones(): void {
  if (!economy) return;
  const zones = zonesOf(economy);
  if (zone !== '' && !zones.includes(zone)) zones.push(zone);
  zoneSelect.innerHTML = [
    `<option value="">All zones</option>`,
    ...zones.map((z) => `<option>${esc(z)}</option>`),
  ].join('');
  zoneSelect.value = zone;
}

/** How long the page waits before reading again after the server could not be reached. */
const RETRY_MS = 2000;
let retryTimer: ReturnType<typeof setTimeout> | undefined;

function showError(error: unknown): void {
  // The server could not be reached, went away mid-answer, or is there but not ready yet (a restart, a
  // network drop, a 503 while it opens its storage): the page is not wrong, only behind; it says so and
  // reads everything again until the server answers.
  if (isTransient(error)) {
    statusLine.textContent = 'Reconnecting…';
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => void load(), RETRY_MS);
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  errorLine.textContent = message;
  errorLine.hidden = false;
  statusLine.textContent = 'Not live';
  // The API refused us for want of a (valid) token: ask for one.
  if (wantsToken(error)) {
    tokenForm.hidden = false;
    $<HTMLInputElement>('token').focus();
  }
}

// ---- live updates -------------------------------------------------------------------------------

interface Change {
  position: number;
  entity: string;
  farmOutput: FarmOutput | null;
  henProductivity: HenProductivity | null;
  containerInventory: ContainerInventory | null;
}

const CHANGES = `subscription ($zone: String, $after: SafeInt) {
  projectionChanges(zone: $zone, after: $after) {
    position entity
    farmOutput { ${FARM_OUTPUT} }
    henProductivity { ${HEN_PRODUCTIVITY} }
    containerInventory { ${CONTAINER_INVENTORY} }
  }
}`;

let stopChanges: (() => void) | undefined;
let listsTimer: ReturnType<typeof setTimeout> | undefined;
let frame = 0;

/** Re-reads the actors and consumption once changes settle (a new farm, hen or container, a consumption). */
function refreshListsSoon(): void {
  clearTimeout(listsTimer);
  listsTimer = setTimeout(() => {
    readLists().then((lists) => {
      if (!economy) return;
      Object.assign(economy, lists);
      renderZones();
      scheduleRender();
    }, showError);
  }, 400);
}

function scheduleRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
    statusLine.textContent = `Live · updated ${new Date().toLocaleTimeString('en-GB')}`;
  });
}

function apply(change: Change): void {
  if (!economy) return;
  const { farmOutput, henProductivity, containerInventory } = change;
  if (farmOutput) {
    if (!economy.farms.has(farmOutput.farm_id)) refreshListsSoon();
    economy.farmOutput.set(farmOutput.farm_id, farmOutput);
  }
  if (henProductivity) {
    if (!economy.hens.has(henProductivity.hen_id)) refreshListsSoon();
    economy.henProductivity.set(henProductivity.hen_id, henProductivity);
  }
  if (containerInventory) {
    // A consumption report moves its container's inventory: the report list is read again.
    refreshListsSoon();
    economy.containerInventory.set(containerInventory.container_id, containerInventory);
  }
  scheduleRender();
}

// Back after a lost connection: read everything again and follow from there (a change committed while
// the socket was down is in the new read).
const client = liveClient({
  closed: () => {
    if (stopChanges) statusLine.textContent = 'Reconnecting…';
  },
  reconnected: () => void load(),
});

/**
 * Reads the read side's position, then the snapshot, then subscribes to the zone's changes after that
 * position: a change committed while the snapshot was read arrives again, none is missed.
 */
async function load(): Promise<void> {
  stopChanges?.();
  stopChanges = undefined;
  try {
    const after = await projectionPosition();
    economy = await readSnapshot();
    errorLine.hidden = true;
    tokenForm.hidden = true;
    renderZones();
    render();
    statusLine.textContent = 'Live';
    stopChanges = client.subscribe<{ projectionChanges: Change }>(
      { query: CHANGES, variables: { zone: zone || null, after } },
      {
        next: (message) => {
          if (message.errors?.[0]) showError(new ApiError(message.errors[0].message, 200));
          else if (message.data) apply(message.data.projectionChanges);
        },
        error: (error) => showError(closeReason(error)),
        complete: () => {},
      },
    );
  } catch (error) {
    showError(error);
  }
}

/** What a failed subscription says: the server's close reason, or its GraphQL errors. */
function closeReason(error: unknown): unknown {
  if (error instanceof CloseEvent) {
    const status = error.code === 4403 ? 403 : error.code === 4401 ? 401 : 0;
    return new ApiError(error.reason || `connection closed (${error.code})`, status);
  }
  if (Array.isArray(error)) return new Error(error.map((e: { message?: string }) => e.message).join('; '));
  return error;
}

zoneSelect.addEventListener('change', () => {
  zone = zoneSelect.value;
  const url = new URL(location.href);
  if (zone) url.searchParams.set('zone', zone);
  else url.searchParams.delete('zone');
  history.replaceState(null, '', url);
  render();
  void load();
});

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  token.set($<HTMLInputElement>('token').value);
  // The socket's connection_init carries the token: start a new connection with it.
  client.terminate();
  void load();
});

void load();
