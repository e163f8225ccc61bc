/**
 * The GraphQL documents the scenarios send, in one place, so ours and the baseline get byte-identical
 * queries. Ids travel as variables: one document per query shape, so graphql-jit compiles each once
 * (inline literals would make every request a new document).
 */

/** The type of `id` arguments in the read-api's schema (MeshQL declares `ID`). */
export const ID_TYPE = 'ID';

export const queries = {
  farmById: `query farmById($id: ${ID_TYPE}) { getById(id: $id) { id name farm_type zone } }`,
  henById: `query henById($id: ${ID_TYPE}) { getById(id: $id) { id name breed status coop_id } }`,
  containerById: `query containerById($id: ${ID_TYPE}) { getById(id: $id) { id name container_type capacity zone } }`,
  farmAll: 'query farmAll { getAll { id name farm_type zone } }',
  farmAllLimited: 'query farmAllLimited($limit: Int) { getAll(limit: $limit) { id name farm_type zone } }',
  consumerAll: 'query consumerAll { getAll { id name consumer_type zone } }',
  farmByZone: 'query farmByZone($zone: String) { getByZone(zone: $zone) { id name farm_type zone } }',
  farmByZoneLimited:
    'query farmByZoneLimited($zone: String, $limit: Int) { getByZone(zone: $zone, limit: $limit) { id name farm_type zone } }',
  coopsByFarm: `query coopsByFarm($id: ${ID_TYPE}) { getByFarm(id: $id) { id name capacity farm_id } }`,
  hensByCoop: `query hensByCoop($id: ${ID_TYPE}) { getByCoop(id: $id) { id name breed status coop_id } }`,
  farmDepth2: `query farmDepth2($id: ${ID_TYPE}) { getById(id: $id) { id name farm_type coops { id name capacity } } }`,
  farmDepth3: `query farmDepth3($id: ${ID_TYPE}) { getById(id: $id) { id name farm_type coops { id name capacity hens { id name breed status } } } }`,
  farmDepth3Output: `query farmDepth3Output($id: ${ID_TYPE}) { getById(id: $id) { id name farm_type coops { id name capacity hens { id name breed status } } farmOutput { farm_id total_hens active_hens eggs_today eggs_week } } }`,
  farmOutputByFarm: `query farmOutputByFarm($id: ${ID_TYPE}) { getByFarm(id: $id) { farm_id farm_type total_hens active_hens eggs_week } }`,
  inventoryByContainer: `query inventoryByContainer($id: ${ID_TYPE}) { getByContainer(id: $id) { container_id current_eggs total_deposits } }`,
  containerWithInventory: `query containerWithInventory($id: ${ID_TYPE}) { getById(id: $id) { id name capacity inventory { current_eggs total_deposits total_withdrawals } } }`,
  henProductivityByHen: `query henProductivityByHen($id: ${ID_TYPE}) { getByHen(id: $id) { hen_id farm_id total_eggs quality_rate } }`,
} as const;

export type QueryName = keyof typeof queries;

/** Lists longer than this are asked for with an explicit `limit` (the read-api's default page size). */
export const LIST_LIMIT = 1000;

/** A GraphQL request body. */
export function gqlBody(query: QueryName, variables?: Record<string, unknown>): string {
  return JSON.stringify(variables ? { query: queries[query], variables } : { query: queries[query] });
}
