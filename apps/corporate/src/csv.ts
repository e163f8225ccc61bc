// CSV as RFC 4180 writes it (quoted fields with "" for a quote, commas and line breaks inside quotes,
// CRLF or LF line ends), and as spreadsheets save it (a UTF-8 byte order mark, a last line end or none).
// Hand-written: the portal needs this reader alone (no writer, no type guessing, no streaming), some
// 40 lines, where a CSV library would be the app's largest dependency.

/** One record of the file: its cells and the line of the file it starts on (the header is line 1). */
export interface CsvRecord {
  readonly line: number;
  readonly cells: string[];
}

/** The file's records in order; a blank line is no record. A quote left open is an error. */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const endRecord = () => {
    cells.push(cell);
    if (cells.length > 1 || cells[0] !== '') records.push({ line: start, cells });
    cells = [];
    cell = '';
  };
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else cell += c;
  }
  if (quoted) throw new Error(`line ${start}: a quoted cell is not closed`);
  if (cell !== '' || cells.length > 0) endRecord();
  return records;
}

/**
 * The rows of a CSV file as API bodies: the header names the fields, an empty cell leaves its field
 * out, and the `numbers` fields are sent as JSON numbers when the cell is one (otherwise as written,
 * for the API to refuse with its own message).
 */
export function csvRows(
  text: string,
  numbers: readonly string[],
): Array<{ line: number; body: Record<string, unknown> }> {
  const [header, ...records] = parseCsv(text);
  if (!header) throw new Error('the file is empty');
  const fields = header.cells.map((name) => name.trim());
  return records.map(({ line, cells }) => {
    const body: Record<string, unknown> = {};
    cells.forEach((value, i) => {
      const field = fields[i] ?? `column ${i + 1}`;
      if (value === '') return;
      body[field] = numbers.includes(field) && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
    });
    return { line, body };
  });
}
