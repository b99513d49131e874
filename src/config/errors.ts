/**
 * A configuration problem, worded for the person who has to fix the file.
 *
 * The message is complete on its own (`<file>:<line>:<column>: <key.path>: <problem>`), so surfaces
 * print `error.message` and nothing else; the fields are there for editors and tests. When several
 * problems were found in one file, each gets its own line and the fields describe the first.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly keyPath?: string;
  /** The problem alone, without the location prefix. */
  readonly problem: string;

  constructor(problem: string, where: ConfigErrorLocation = {}, moreLines: readonly string[] = []) {
    super([formatConfigProblem(problem, where), ...moreLines].join("\n"));
    this.problem = problem;
    if (where.file !== undefined) this.file = where.file;
    if (where.line !== undefined) this.line = where.line;
    if (where.column !== undefined) this.column = where.column;
    if (where.keyPath !== undefined && where.keyPath !== "") this.keyPath = where.keyPath;
  }
}

export type ConfigErrorLocation = {
  file?: string;
  line?: number;
  column?: number;
  keyPath?: string;
};

/** One line `<file>:<line>:<column>: <key.path>: <problem>`, leaving out the parts that are unknown. */
export function formatConfigProblem(problem: string, where: ConfigErrorLocation): string {
  const parts: string[] = [];
  if (where.file !== undefined) {
    let place = where.file;
    if (where.line !== undefined) place += `:${where.line}`;
    if (where.line !== undefined && where.column !== undefined) place += `:${where.column}`;
    parts.push(place);
  }
  if (where.keyPath !== undefined && where.keyPath !== "") parts.push(where.keyPath);
  parts.push(problem);
  return parts.join(": ");
}
