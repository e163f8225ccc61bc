import { ApiError, refusalText, restWrite } from '../../shared/api.js';

/** Rows per bulk request: under EGGMESH_BULK_MAX_ITEMS (1000 by default), a progress step per chunk. */
export const CHUNK = 500;
/** Times a chunk is sent again after the server said to wait (503 overloaded, 429, 408). */
const RETRIES = 5;

export interface Refusal {
  /** The file's line the row starts on (the header is line 1). */
  readonly line: number;
  /** The API's message for the row. */
  readonly message: string;
}

export interface UploadResult {
  accepted: number;
  refused: Refusal[];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends the rows to `POST /<entity>/api/bulk` in chunks. A bulk create stores all of a chunk or none and
 * names the item it refused (`index`): that row is set aside with the API's reason and the rest of the
 * chunk is sent again, so every good row is stored and every bad one reported. A refusal of the whole
 * request (no `index`: a token, a size limit) ends the upload with the API's message.
 */
export async function uploadRows(
  entity: string,
  rows: ReadonlyArray<{ line: number; body: Record<string, unknown> }>,
  progress: (done: number, result: UploadResult) => void,
): Promise<UploadResult> {
  const result: UploadResult = { accepted: 0, refused: [] };
  for (let start = 0; start < rows.length; start += CHUNK) {
    const pending = rows.slice(start, start + CHUNK);
    let retries = 0;
    while (pending.length > 0) {
      try {
        await restWrite(
          `/${entity}/api/bulk`,
          pending.map((row) => row.body),
        );
        result.accepted += pending.length;
        break;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const index = error.body.index;
        if (typeof index === 'number' && pending[index]) {
          const [row] = pending.splice(index, 1);
          result.refused.push({ line: row!.line, message: refusalText(error) });
        } else if ([408, 429, 503].includes(error.status) && retries < RETRIES) {
          retries++;
          await pause(Number(error.body.retryAfterS ?? 1) * 1000);
        } else throw error;
      }
    }
    progress(Math.min(start + CHUNK, rows.length), result);
  }
  return result;
}
