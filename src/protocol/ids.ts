/**
 * Id shapes shared by every surface: runs `run_YYYYMMDD_<suffix>`, sessions
 * `zero_YYYYMMDDhhmmss_<suffix>`. The suffix is random so ids never collide
 * across processes writing to the same store.
 */
function suffix(length = 10): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

export function newRunId(now: Date = new Date()): string {
  const day = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  return `run_${day}_${suffix()}`;
}

export function newSessionId(now: Date = new Date()): string {
  const stamp =
    `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}` +
    `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `zero_${stamp}_${suffix()}`;
}

export const RUN_ID_PATTERN = /^run_\d{8}_[0-9a-z]+$/;
export const SESSION_ID_PATTERN = /^zero_\d{14}_[0-9a-z]+$/;
