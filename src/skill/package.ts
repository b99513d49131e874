/**
 * Reading one skill package: its SKILL.md (a bounded, regular, UTF-8 file with valid frontmatter,
 * never a symlink) and its directory (bounded in entries and bytes, never zero's private state).
 * What is read is checked first and opened without following links (security/files.ts), so the
 * file that was validated is the file whose path the model is given.
 */
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readRegularFile } from "../security/files.ts";
import { isWithin } from "../util/paths.ts";
import { errorMessage } from "../util/errors.ts";
import { FrontmatterError, parseFrontmatter, unsafeCharacter } from "./frontmatter.ts";

export const SKILL_FILE = "SKILL.md";

/** The bounds of one package (see docs/skills.md). */
export const SKILL_LIMITS = {
  /** SKILL.md itself: the entry point is instructions, not a data file. */
  fileBytes: 64 * 1024,
  nameChars: 64,
  descriptionChars: 1024,
  /** Files and directories under the package directory, counted recursively. */
  packageEntries: 1000,
  /** Bytes of the regular files under the package directory. */
  packageBytes: 16 * 1024 * 1024,
  /** Directory levels below the package directory that are walked. */
  packageDepth: 8,
} as const;

/** A skill id: what `$name` and an agent's `skills` list refer to. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** A validated package: its canonical directory and SKILL.md, and its one-line metadata. */
export type SkillPackage = { name: string; description: string; dir: string; file: string };

export type PackageCheck = { ok: true; value: SkillPackage } | { ok: false; reason: string };

export type PackageRules = {
  /** Canonical directories a package may neither be, contain, nor lie in (zero's state and config). */
  privateDirs: readonly string[];
  /** Canonical directory inside a private one where packages may live (`<config>/skills`). */
  privateSkillsDir?: string;
  /** Refuse a SKILL.md or package directory that another user owns or everyone may write (workspace packages). */
  ownerOnly?: boolean;
  /**
   * The canonical workspace: a package directory may not be it or contain it (its read-only root
   * would make the whole workspace read-only, or open its parents for reading).
   */
  workspace?: string;
};

/** Reads and validates the package whose entry point is `file` (a path to a SKILL.md). */
export function readSkillPackage(file: string, rules: PackageRules): PackageCheck {
  try {
    return { ok: true, value: readPackage(file, rules) };
  } catch (error) {
    return { ok: false, reason: error instanceof FrontmatterError ? `invalid frontmatter: ${error.message}` : errorMessage(error) };
  }
}

function readPackage(path: string, rules: PackageRules): SkillPackage {
  if (basename(path) !== SKILL_FILE) throw new Error(`the entry point must be a file named ${SKILL_FILE}`);
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (info === undefined) throw new Error(`${SKILL_FILE} does not exist`);
  if (info.isSymbolicLink()) throw new Error(`${SKILL_FILE} is a symbolic link; only a regular file is loaded`);
  if (!info.isFile()) throw new Error(`${SKILL_FILE} is not a regular file`);
  const dir = realpathSync(dirname(path));
  const file = join(dir, SKILL_FILE);
  const unsafePath = unsafeCharacter(file, false);
  if (unsafePath !== undefined) throw new Error(`its path contains the unsafe character ${unsafePath}`);
  checkPlace(dir, rules);
  const head = readRegularFile(file, SKILL_LIMITS.fileBytes);
  if (head.truncated) throw new Error(`${SKILL_FILE} is larger than ${SKILL_LIMITS.fileBytes / 1024} KiB`);
  if (rules.ownerOnly) {
    checkOwner(file, lstatSync(file));
    checkOwner(dir, lstatSync(dir));
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(head.bytes);
  } catch {
    throw new Error(`${SKILL_FILE} is not valid UTF-8`);
  }
  const { name, description } = parseFrontmatter(text);
  if (name.length > SKILL_LIMITS.nameChars) throw new Error(`"name" is longer than ${SKILL_LIMITS.nameChars} characters`);
  if (!NAME.test(name)) throw new Error(`"name" ${JSON.stringify(name)} must be letters, digits, ".", "_" or "-" (starting and ending with a letter or digit)`);
  if ([...description].length > SKILL_LIMITS.descriptionChars) throw new Error(`"description" is longer than ${SKILL_LIMITS.descriptionChars} characters`);
  checkPackageSize(dir);
  return { name, description, dir, file };
}

/** A package directory may not be or hold zero's private state; inside the config dir only under `skills/`. */
function checkPlace(dir: string, rules: PackageRules): void {
  if (rules.workspace !== undefined && isWithin(dir, rules.workspace)) {
    throw new Error(`the package directory ${dir} is or contains the workspace; a skill package must be a directory of its own`);
  }
  for (const privateDir of rules.privateDirs) {
    if (isWithin(dir, privateDir)) throw new Error(`the package directory ${dir} contains zero's private directory ${privateDir}`);
    if (!isWithin(privateDir, dir)) continue;
    const skills = rules.privateSkillsDir;
    if (skills === undefined || dir === skills || !isWithin(skills, dir)) {
      throw new Error(`the package directory ${dir} lies inside zero's private directory ${privateDir}`);
    }
  }
}

function checkOwner(path: string, info: { mode: number; uid: number }): void {
  const uid = process.getuid?.();
  if ((info.mode & 0o002) !== 0) throw new Error(`${path} is writable by every user`);
  if (uid !== undefined && info.uid !== uid && info.uid !== 0) throw new Error(`${path} belongs to another user (uid ${info.uid})`);
}

/** Walks the package (links are counted, never followed) until a bound is passed. */
function checkPackageSize(dir: string): void {
  let entries = 0;
  let bytes = 0;
  const walk = (current: string, depth: number): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      entries += 1;
      if (entries > SKILL_LIMITS.packageEntries) throw new Error(`the package has more than ${SKILL_LIMITS.packageEntries} files and directories`);
      const path = join(current, entry.name);
      if (entry.isFile()) {
        bytes += lstatSync(path).size;
        if (bytes > SKILL_LIMITS.packageBytes) throw new Error(`the package is larger than ${SKILL_LIMITS.packageBytes / 1024 / 1024} MiB`);
      } else if (entry.isDirectory()) {
        if (depth >= SKILL_LIMITS.packageDepth) throw new Error(`the package is nested deeper than ${SKILL_LIMITS.packageDepth} directories`);
        walk(path, depth + 1);
      }
    }
  };
  walk(dir, 0);
}
