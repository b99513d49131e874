import { createHash, randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir } from "./state.ts";

/** The largest artifact kept; larger content is cut to this before storing. */
export const MAX_ARTIFACT_BYTES = 32 * 1024 * 1024;

const REFERENCE = /^artifact:\/\/([0-9a-f]{64})$/;
export const ARTIFACT_REFERENCE_IN_TEXT = /artifact:\/\/[0-9a-f]{64}/g;

export type ArtifactRef = { sha256: string; uri: string; bytes: number };

export type ArtifactStore = {
  /** Stores content by its SHA-256; the same bytes are stored once. */
  put(content: string | Uint8Array): ArtifactRef;
  /** Reads an artifact and verifies it against its hash; throws with a readable message otherwise. */
  get(sha256: string): Uint8Array;
};

/** The hash in an `artifact://<sha256>` reference, or undefined when the text is not one. */
export function parseArtifactUri(uri: string): string | undefined {
  return REFERENCE.exec(uri)?.[1];
}

export function artifactUri(sha256: string): string {
  return `artifact://${sha256}`;
}

/**
 * Content-addressed blobs under a private directory (0700 dirs, 0600 files),
 * written atomically (temporary file + rename) and verified on every read.
 * Tools get references, never the directory's path.
 */
export function createArtifactStore(dir: string): ArtifactStore {
  let ready = false;
  const pathOf = (sha256: string) => join(dir, sha256.slice(0, 2), sha256);

  return {
    put(content) {
      let bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
      if (bytes.length > MAX_ARTIFACT_BYTES) bytes = bytes.subarray(0, MAX_ARTIFACT_BYTES);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      const target = pathOf(sha256);
      if (!ready) {
        ensurePrivateDir(dir);
        ready = true;
      }
      ensurePrivateDir(join(dir, sha256.slice(0, 2)));
      const exists = statSync(target, { throwIfNoEntry: false });
      if (exists?.isFile() && exists.size === bytes.length) return { sha256, uri: artifactUri(sha256), bytes: bytes.length };
      const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      const fd = openSync(temp, "wx", 0o600);
      try {
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      } catch (error) {
        closeSync(fd);
        rmSync(temp, { force: true });
        throw error;
      }
      closeSync(fd);
      renameSync(temp, target);
      return { sha256, uri: artifactUri(sha256), bytes: bytes.length };
    },
    get(sha256) {
      if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`invalid artifact id "${sha256}"`);
      let bytes: Uint8Array;
      try {
        bytes = readFileSync(pathOf(sha256));
      } catch {
        throw new Error(`artifact://${sha256} is not in the artifact store`);
      }
      const actual = createHash("sha256").update(bytes).digest("hex");
      if (actual !== sha256) throw new Error(`artifact://${sha256} failed verification (its content no longer matches its hash)`);
      return bytes;
    },
  };
}
