import packageJson from "../../package.json" with { type: "json" };

/** The package version, read from package.json at build time of the import graph. */
export const VERSION: string = packageJson.version;
