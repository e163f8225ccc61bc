export { type BuildAppOptions, buildApp } from './app.js';
export {
  type Consistency,
  MIN_POSITION_HEADER,
  type Positions,
  parseMinPosition,
  STALE_HEADER,
} from './consistency.js';
export { type GraphqlErrorCode, graphqlErrors, httpErrors } from './errors.js';
export type { ReadStore } from './graphql/endpoint.js';
export { type CostModel, estimateCost } from './limits/cost.js';
export { checkDocumentSize, nestingFor, type SizeLimits } from './limits/document-size.js';
export { checkShape, documentShapes, type Shape, type ShapeLimits } from './limits/shape.js';
export { unifiedNames } from './schema/naming.js';
export { entitySdl, type ListLimits, type QueryLimits, unifiedSdl } from './schema/sdl.js';
