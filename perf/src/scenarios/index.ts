import { crudSequence } from './crud-sequence.js';
import { federationDepth } from './federation-depth.js';
import { graphqlQueries } from './graphql-queries.js';
import { latency } from './latency.js';
import { mixedWorkload } from './mixed-workload.js';
import { querying } from './querying.js';
import { restCrud } from './rest-crud.js';
import { scaling } from './scaling.js';
import { soak } from './soak.js';
import { subscriptions } from './subscriptions.js';
import type { Scenario, ScenarioName } from './types.js';

export const scenarios: Readonly<Record<ScenarioName, Scenario>> = {
  'rest-crud': restCrud,
  'crud-sequence': crudSequence,
  'graphql-queries': graphqlQueries,
  'federation-depth': federationDepth,
  'mixed-workload': mixedWorkload,
  querying,
  latency,
  soak,
  scaling,
  subscriptions,
};
