/**
 * When an edit's oldText is not found, the model's best next step is to see what the file really
 * has where it expected its text. This finds the closest regions: first the same lines apart from
 * whitespace, then lines that are merely similar, each shown with its line numbers.
 */

const MAX_REGIONS = 3;
const MAX_SHOWN_LINES = 12;
const MAX_SHOWN_LINE_CHARS = 200;
/** Only this many leading characters of a line take part in the similarity score. */
const MAX_SCORED_CHARS = 300;
/** Bound on (file line, oldText line) comparisons, so a huge file stays fast. */
const MAX_COMPARISONS = 200_000;
const MIN_SIMILARITY = 0.5;
/** A line as the read tool shows it: `<number><tab><text>`. */
const READ_LINE_PREFIX = /^\s*\d+\t/;

function normalize(line: string): string {
  return line.trim().replace(/\s+/g, " ");
}

function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const clipped = text.slice(0, MAX_SCORED_CHARS);
  for (let i = 0; i + 1 < clipped.length; i++) {
    const pair = clipped.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return counts;
}

/** Sørensen–Dice similarity of two lines' character bigrams, 0..1. */
function dice(a: string, b: string, aGrams: Map<string, number>, bGrams: Map<string, number>): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  let shared = 0;
  let total = 0;
  for (const count of aGrams.values()) total += count;
  for (const count of bGrams.values()) total += count;
  for (const [pair, count] of aGrams) shared += Math.min(count, bGrams.get(pair) ?? 0);
  return total === 0 ? 0 : (2 * shared) / total;
}

type Region = { start: number; length: number; score: number };

function showRegion(lines: string[], region: Region): string {
  const shown = lines.slice(region.start, region.start + Math.min(region.length, MAX_SHOWN_LINES)).map((line, offset) => {
    const text = line.length > MAX_SHOWN_LINE_CHARS ? `${line.slice(0, MAX_SHOWN_LINE_CHARS)} …` : line;
    return `${region.start + offset + 1}\t${text}`;
  });
  if (region.length > MAX_SHOWN_LINES) shown.push(`… ${region.length - MAX_SHOWN_LINES} more lines`);
  return shown.join("\n");
}

function range(region: Region): string {
  const first = region.start + 1;
  const last = region.start + region.length;
  return first === last ? `line ${first}` : `lines ${first}-${last}`;
}

/** Drops blank lines at both ends of oldText: they rarely explain a mismatch. */
function trimBlankEnds(lines: string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && (lines[start] ?? "").trim() === "") start += 1;
  while (end > start && (lines[end - 1] ?? "").trim() === "") end -= 1;
  return lines.slice(start, end);
}

/** Regions of the file equal to the wanted lines once whitespace is collapsed. */
function whitespaceMatches(fileNorm: string[], wantedNorm: string[]): Region[] {
  const found: Region[] = [];
  for (let i = 0; i + wantedNorm.length <= fileNorm.length && found.length < MAX_REGIONS; i++) {
    if (wantedNorm.every((line, j) => fileNorm[i + j] === line)) found.push({ start: i, length: wantedNorm.length, score: 1 });
  }
  return found;
}

/** The best-scoring windows of the wanted length, non-overlapping, above the threshold. */
function similarRegions(fileNorm: string[], wantedNorm: string[]): Region[] {
  const windows = Math.max(1, fileNorm.length - wantedNorm.length + 1);
  // Compare fewer oldText lines per window on very large files rather than give no answer.
  const compared = Math.max(1, Math.min(wantedNorm.length, Math.floor(MAX_COMPARISONS / windows)));
  const wantedGrams = wantedNorm.slice(0, compared).map(bigrams);
  const fileGrams = new Map<number, Map<string, number>>();
  const gramsOf = (index: number): Map<string, number> => {
    let grams = fileGrams.get(index);
    if (grams === undefined) {
      grams = bigrams(fileNorm[index] ?? "");
      fileGrams.set(index, grams);
    }
    return grams;
  };
  const scored: Region[] = [];
  for (let i = 0; i < windows; i++) {
    let total = 0;
    for (let j = 0; j < compared; j++) {
      const line = fileNorm[i + j] ?? "";
      const wanted = wantedNorm[j] ?? "";
      total += dice(line, wanted, gramsOf(i + j), wantedGrams[j] ?? new Map());
    }
    const score = total / compared;
    if (score >= MIN_SIMILARITY) scored.push({ start: i, length: Math.min(wantedNorm.length, fileNorm.length - i), score });
  }
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  const chosen: Region[] = [];
  for (const region of scored) {
    if (chosen.length >= MAX_REGIONS) break;
    const overlaps = chosen.some((other) => region.start < other.start + other.length && other.start < region.start + region.length);
    if (!overlaps) chosen.push(region);
  }
  return chosen;
}

/** Lines of the file that contain a one-line oldText once whitespace and case are ignored. */
function fragmentMatches(fileNorm: string[], wanted: string): Region[] {
  const needle = wanted.toLowerCase();
  const found: Region[] = [];
  for (let i = 0; i < fileNorm.length && found.length < MAX_REGIONS; i++) {
    if ((fileNorm[i] ?? "").toLowerCase().includes(needle)) found.push({ start: i, length: 1, score: 1 });
  }
  return found;
}

/**
 * A readable explanation of where oldText almost occurs in `content`. Always returns text: at worst
 * the advice to read the file again.
 */
export function describeNearMatches(content: string, oldText: string): string {
  const fileLines = content.split(/\r?\n/);
  const wanted = trimBlankEnds(oldText.split(/\r?\n/));
  const notes: string[] = [];
  if (wanted.length > 0 && wanted.every((line) => READ_LINE_PREFIX.test(line) || line.trim() === "")) {
    notes.push("oldText seems to include line-number prefixes from read output; send the file's text without them.");
  }
  if (wanted.length === 0) return "oldText contains only whitespace; include the text to replace.";
  const fileNorm = fileLines.map(normalize);
  const wantedNorm = wanted.map((line) => normalize(line.replace(READ_LINE_PREFIX, "")));

  const exact = whitespaceMatches(fileNorm, wantedNorm);
  if (exact.length > 0) {
    notes.push("The text occurs with different whitespace or indentation; use the file's exact text:");
    for (const region of exact) notes.push(`${range(region)}:\n${showRegion(fileLines, region)}`);
    return notes.join("\n");
  }
  const single = wantedNorm.length === 1 && (wantedNorm[0] ?? "").length >= 3 ? fragmentMatches(fileNorm, wantedNorm[0] ?? "") : [];
  if (single.length > 0) {
    notes.push("Lines containing the text when case and whitespace are ignored:");
    for (const region of single) notes.push(`${range(region)}:\n${showRegion(fileLines, region)}`);
    return notes.join("\n");
  }
  const similar = similarRegions(fileNorm, wantedNorm);
  if (similar.length > 0) {
    notes.push("The closest regions of the file:");
    for (const region of similar) {
      notes.push(`${range(region)} (${Math.round(region.score * 100)}% similar):\n${showRegion(fileLines, region)}`);
    }
  } else {
    notes.push("Nothing in the file resembles oldText; read the file again to see its current content.");
  }
  return notes.join("\n");
}
