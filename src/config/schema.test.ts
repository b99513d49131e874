import { describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtInDefaults } from "./defaults.ts";
import { ConfigError } from "./errors.ts";
import { loadConfig } from "./load.ts";
import { API_KEY_IN_PROFILE, configFileSchema, type ConfigFile } from "./schema.ts";
import { parseJsonc, validateConfigFile } from "./validate.ts";

const FILE = "/w/zero-cli.jsonc";

function check(text: string): ConfigFile {
  return validateConfigFile(FILE, text, parseJsonc(FILE, text));
}

function problem(text: string): ConfigError {
  try {
    check(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

/** The README's "Different models for plan, build, and review" configuration, verbatim. */
const README_EXAMPLE = `{
  "version": 2,
  "defaultAgent": "build",
  "workDepth": "medium",
  "permissionMode": "ask",

  "providers": {
    "company-openai": {
      "type": "openai",
      "baseURL": "https://api.openai.com/v1",
      "apiKeyEnv": "COMPANY_OPENAI_API_KEY"
    }
  },

  "webSearch": {
    "provider": "brave",
    "apiKeyEnv": "BRAVE_SEARCH_API_KEY",
    "safeSearch": "moderate"
  },

  "models": {
    "planner": {
      "provider": "company-openai",
      "model": "planning-model",
      "capabilities": ["text", "tools", "structured-output"]
    },
    "coder": {
      "provider": "company-openai",
      "model": "coding-model",
      "contextWindow": 200000,
      "capabilities": ["text", "tools"]
    },
    "reviewer": {
      "provider": "company-openai",
      "model": "review-model",
      "capabilities": ["text", "tools"]
    },
    "vision-model": {
      "provider": "gateway",
      "model": "provider/multimodal-model",
      "capabilities": ["text", "image", "file", "tools"]
    }
  },

  "agents": {
    "plan": {
      "description": "Read-only planner",
      "model": "planner",
      "promptFile": "./prompts/zero-cli/plan.md",
      "tools": ["read", "find", "delegate"],
      "skills": ["*"],
      "canDelegateTo": ["explore"],
      "accepts": ["plan"],
      "permissionMode": "read-only",
      "workspaceMode": "shared-readonly",
      "maxChildren": 64,
      "maxSteps": 100,
      "maxToolCalls": 500
    },
    "build": {
      "description": "General-purpose root orchestrator",
      "model": "coder",
      "promptFile": "./prompts/zero-cli/build.md",
      "tools": ["read", "write", "run", "find", "search", "delegate"],
      "skills": ["*"],
      "canDelegateTo": ["plan", "explore", "implement", "verify", "review", "vision"],
      "accepts": ["patch", "test_result"],
      "workspaceMode": "shared-write",
      "maxChildren": 64,
      "maxTokens": 200000,
      "timeoutMs": 28800000,
      "maxSteps": 100,
      "maxToolCalls": 500
    },
    "explore": {
      "description": "Repository explorer",
      "model": "coder",
      "promptFile": "./prompts/zero-cli/explore.md",
      "tools": ["read", "find"],
      "skills": ["*"],
      "accepts": ["analysis"],
      "permissionMode": "read-only",
      "workspaceMode": "shared-readonly",
      "maxChildren": 0,
      "maxSteps": 100
    },
    "implement": {
      "description": "Bounded implementation specialist",
      "model": "coder",
      "promptFile": "./prompts/zero-cli/implement.md",
      "tools": ["read", "write", "find", "run", "search"],
      "skills": ["*"],
      "accepts": ["patch"],
      "permissionMode": "accept-edits",
      "workspaceMode": "git-worktree",
      "maxChildren": 0,
      "maxSteps": 100
    },
    "verify": {
      "description": "Verification and test specialist",
      "model": "coder",
      "promptFile": "./prompts/zero-cli/verify.md",
      "tools": ["read", "find", "run"],
      "skills": ["*"],
      "accepts": ["test_result"],
      "permissionMode": "ask",
      "workspaceMode": "shared-write",
      "maxChildren": 0,
      "maxSteps": 100
    },
    "review": {
      "description": "Independent reviewer",
      "model": "reviewer",
      "promptFile": "./prompts/zero-cli/review.md",
      "tools": ["read", "find"],
      "skills": ["*"],
      "accepts": ["review"],
      "permissionMode": "read-only",
      "workspaceMode": "shared-readonly",
      "maxChildren": 0,
      "maxSteps": 100
    },
    "vision": {
      "description": "Image and document specialist",
      "model": "vision-model",
      "promptFile": "./prompts/zero-cli/vision.md",
      "tools": ["read"],
      "skills": ["*"],
      "permissionMode": "read-only",
      "workspaceMode": "shared-readonly",
      "maxChildren": 0,
      "maxSteps": 100
    }
  },

  "workflows": {
    "feature": {
      "description": "Plan, implement, then review",
      "steps": ["plan", "build", "review"]
    }
  },

  "multiAgent": {
    "maxDepth": 8,
    "maxConcurrent": 8,
    "maxChildrenPerAgent": 64,
    "defaultContext": "summary",
    "cancelChildrenWithParent": true,
    "maxRetries": 1
  },

  "goals": {
    "enabled": true,
    "maxIterations": 64,
    "maxNoProgressIterations": 3,
    "iterationDelayMs": 0,
    "autoResume": true
  },

  "limits": {
    // Deprecated delegation aliases retained for older configuration files.
    "maxDepth": 8,
    "maxChildrenPerRun": 64,
    "runTimeoutMs": 28800000,
    "toolTimeoutMs": 120000,
    "maxAttachmentBytes": 10485760
  }
}`;

describe("README configuration examples", () => {
  test("the plan/build/review example validates", () => {
    const file = check(README_EXAMPLE);
    expect(file.agents?.build?.canDelegateTo).toEqual(["plan", "explore", "implement", "verify", "review", "vision"]);
    expect(file.limits?.maxChildrenPerRun).toBe(64);
  });

  test("the plan/build/review example loads as an explicit file, profiles materialized", () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-schema-")));
    try {
      const file = join(root, "example.jsonc");
      writeFileSync(file, README_EXAMPLE);
      const { config } = loadConfig({ workspace: root, env: { HOME: join(root, "home"), ZERO_CLI_CONFIG: file } });
      expect(config.models.planner).toMatchObject({ type: "openai", profile: "company-openai", apiKeyEnv: "COMPANY_OPENAI_API_KEY" });
      expect(config.agents.plan?.promptFile).toBe(join(root, "prompts", "zero-cli", "plan.md"));
      expect(config.multiAgent.maxDepth).toBe(8);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("the other documented blocks validate", () => {
    const blocks = [
      `{ "context": { "fallbackWindowTokens": 128000, "compaction": { "enabled": true, "triggerRatio": 0.8, "targetRatio": 0.45,
         "recentFraction": 0.15, "minimumRecentTurns": 2, "keepRecentTurns": 6, "maxSummaryTokens": 4096, "reservedOutputTokens": 8192,
         "safetyBufferTokens": 4096, "rebaseAfter": 4, "rebaseAfterValidationFailures": 2, "pruneToolOutputs": true } },
         "limits": { "maxCampaignTokens": 4000000, "maxCostUsd": 25 },
         "models": { "coder": { "provider": "openai", "model": "m", "contextWindow": 200000,
           "pricing": { "inputPerMillionUsd": 2, "outputPerMillionUsd": 8, "cachedInputPerMillionUsd": 0.5 } } } }`,
      `{ "skills": { "release-notes": "./automation/release-notes/SKILL.md",
           "legacy-checks": { "path": "./automation/legacy-checks/SKILL.md", "enabled": false } },
         // comment
         "agents": { "build": { "skills": ["release-notes"] }, "review": { "skills": ["*"] } } }`,
      `{ "mcp": { "local-docs": { "type": "stdio", "command": "/abs/docs-mcp", "args": ["--workspace", "."], "cwd": ".", "env": { "LOG_LEVEL": "warn" } },
           "issues": { "type": "http", "url": "https://mcp.example.com/mcp", "oauth": true },
           "enterprise": { "type": "http", "url": "https://tools.example.com/mcp", "oauth": { "clientId": "registered-client-id",
             "clientSecretEnv": "ENTERPRISE_MCP_CLIENT_SECRET", "scopes": ["tools.read", "tools.write"], "callbackPort": 53682 } } },
         "agents": { "build": { "mcpServers": ["local-docs", "issues", "enterprise"] } } }`,
      `{ "providers": { "local": { "type": "openai-compatible", "baseURL": "http://127.0.0.1:11434/v1", "apiKeyEnv": "LOCAL_MODEL_API_KEY" } },
         "models": { "local-coder": { "provider": "local", "model": "m", "capabilities": ["text", "tools"],
           "settings": { "temperature": 0.1 }, "reasoningEffort": "high", "speed": "fast" } },
         "agents": { "build": { "model": "local-coder" } } }`,
      `{ "models": { "kimi-direct": { "provider": "kimi", "model": "kimi-for-coding", "apiKeyEnv": "KIMI_API_KEY" },
           "codex-subscription": { "provider": "openai-codex", "model": "default" } } }`,
      `{ "workflows": { "feature": { "description": "d", "steps": [
           { "id": "backend", "agent": "explore", "dependsOn": [] }, { "id": "tests", "agent": "explore", "dependsOn": [] },
           { "id": "build", "agent": "build", "dependsOn": ["backend", "tests"] },
           { "id": "review", "agent": "review", "dependsOn": ["build"], "maxRetries": 1 } ] } } }`,
      `{ "storage": { "enabled": false, "path": "zero-cli.db" }, "plugins": ["./zero-cli.plugin.ts"],
         "goals": { "enabled": true, "maxIterations": 64, "maxNoProgressIterations": 3, "iterationDelayMs": 0, "autoResume": true } }`,
    ];
    for (const block of blocks) expect(() => check(block)).not.toThrow();
  });

  test("the built-in defaults satisfy the file schema", () => {
    expect(configFileSchema.safeParse(builtInDefaults({})).success).toBe(true);
  });
});

describe("validation errors", () => {
  test("an out-of-set value names file, line, column, key path and the allowed values", () => {
    const error = problem(`{\n  "version": 2,\n  // the mode\n  "permissionMode": "yolo"\n}`);
    expect(error.message).toBe(
      `/w/zero-cli.jsonc:4:21: permissionMode: invalid value "yolo" (allowed: read-only, ask, accept-edits, full-access)`,
    );
    expect([error.file, error.line, error.column, error.keyPath]).toEqual([FILE, 4, 21, "permissionMode"]);
  });

  const enumCases: Array<[string, string, string, string]> = [
    ["workDepth", `{"workDepth": "huge"}`, "workDepth", "flash, medium, pro, ultra"],
    ["profile type", `{"providers": {"p": {"type": "azure"}}}`, "providers.p.type", "openai, anthropic, kimi, nebius, openai-compatible"],
    ["capability", `{"models": {"m": {"provider": "openai", "model": "x", "capabilities": ["text", "smell"]}}}`, "models.m.capabilities[1]", "text, image, audio, file, tools, structured-output"],
    ["reasoningEffort", `{"models": {"m": {"provider": "openai", "model": "x", "reasoningEffort": "extreme"}}}`, "models.m.reasoningEffort", "default, low, medium, high, xhigh, max, ultra"],
    ["speed", `{"models": {"m": {"provider": "openai", "model": "x", "speed": "warp"}}}`, "models.m.speed", "standard, fast"],
    ["supportedSpeeds", `{"models": {"m": {"provider": "openai", "model": "x", "supportedSpeeds": ["slow"]}}}`, "models.m.supportedSpeeds[0]", "standard, fast"],
    ["supportedReasoningEfforts", `{"models": {"m": {"provider": "openai", "model": "x", "supportedReasoningEfforts": ["none"]}}}`, "models.m.supportedReasoningEfforts[0]", "default, low, medium"],
    ["accepts", `{"agents": {"a": {"accepts": ["essay"]}}}`, "agents.a.accepts[0]", "analysis, plan, patch, review, test_result"],
    ["agent permissionMode", `{"agents": {"a": {"permissionMode": "root"}}}`, "agents.a.permissionMode", "read-only, ask, accept-edits, full-access"],
    ["workspaceMode", `{"agents": {"a": {"workspaceMode": "docker"}}}`, "agents.a.workspaceMode", "shared-readonly, shared-write, git-worktree, scratch"],
    ["defaultContext", `{"multiAgent": {"defaultContext": "everything"}}`, "multiAgent.defaultContext", "none, summary, full, recent"],
    ["safeSearch", `{"webSearch": {"safeSearch": "extra"}}`, "webSearch.safeSearch", "off, moderate, strict"],
    ["webSearch provider", `{"webSearch": {"provider": "google"}}`, "webSearch.provider", "brave"],
    ["mcp type", `{"mcp": {"x": {"type": "websocket"}}}`, "mcp.x.type", "stdio, http"],
    ["version", `{"version": 3}`, "version", "1, 2"],
  ];
  for (const [name, text, keyPath, allowed] of enumCases) {
    test(`${name} rejects an out-of-set value`, () => {
      const error = problem(text);
      expect(error.keyPath).toBe(keyPath);
      expect(error.message).toStartWith(`${FILE}:1:`);
      expect(error.message).toContain(`${keyPath}: invalid value`);
      expect(error.message).toContain(`(allowed: ${allowed}`);
    });
  }

  test("the legacy SSE transport is refused with a message that names the replacement", () => {
    const error = problem(`{"mcp": {"x": {"type": "sse", "url": "https://x.example/sse"}}}`);
    expect(error.keyPath).toBe("mcp.x.type");
    expect(error.message).toContain(`mcp.x.type: "sse" (the legacy HTTP+SSE transport) is not supported: use "http" (Streamable HTTP)`);
  });

  test("an unknown key is rejected and the allowed keys are listed, pointing at the key", () => {
    const error = problem(`{\n  "agents": {\n    "build": { "colour": "red" }\n  }\n}`);
    expect(error.keyPath).toBe("agents.build.colour");
    expect([error.line, error.column]).toEqual([3, 16]);
    expect(error.message).toContain(`unknown key "colour" (allowed: description, model, prompt, promptFile, tools,`);
    expect(problem(`{"permisionMode": "ask"}`).message).toContain(`unknown key "permisionMode" (allowed: $schema, version, defaultAgent,`);
  });

  test("an apiKey in a provider profile gets its own explanation", () => {
    const error = problem(`{"providers": {"p": {"type": "openai", "apiKey": "sk-secret"}}}`);
    expect(error.keyPath).toBe("providers.p.apiKey");
    expect(error.problem).toBe(API_KEY_IN_PROFILE);
    expect(problem(`{"providers": {"p": {"nope": 1}}}`).problem).toBe(
      `unknown key "nope" (allowed: type, baseURL, apiKeyEnv, headers)`,
    );
  });

  test("environment variable names, URLs and numbers are checked", () => {
    expect(problem(`{"providers": {"p": {"apiKeyEnv": "sk-live-123"}}}`).problem).toContain("NAME of an environment variable");
    expect(problem(`{"webSearch": {"apiKeyEnv": "MY KEY"}}`).keyPath).toBe("webSearch.apiKeyEnv");
    expect(problem(`{"providers": {"p": {"baseURL": "file:///etc/passwd"}}}`).problem).toBe("must be an http:// or https:// URL");
    expect(problem(`{"mcp": {"x": {"type": "http", "url": "not a url"}}}`).keyPath).toBe("mcp.x.url");
    expect(problem(`{"limits": {"toolTimeoutMs": 1.5}}`).problem).toBe("expected an integer, got 1.5");
    expect(problem(`{"limits": {"toolTimeoutMs": 0}}`).problem).toBe("must be greater than 0");
    expect(problem(`{"webSearch": {"count": 21}}`).problem).toBe("must be at most 20");
    expect(problem(`{"models": {"m": {"provider": "openai"}}}`).message).toContain("models.m.model: is required");
  });

  test("prompt and promptFile are mutually exclusive", () => {
    expect(problem(`{"agents": {"a": {"prompt": "p", "promptFile": "./p.md"}}}`).keyPath).toBe("agents.a.promptFile");
  });

  test("a model's configured effort and speed must be among the declared ones", () => {
    const text = `{"models": {"m": {"provider": "openai", "model": "x", "reasoningEffort": "high", "supportedReasoningEfforts": ["low"]}}}`;
    expect(problem(text).keyPath).toBe("models.m.reasoningEffort");
    expect(problem(`{"models": {"m": {"provider": "openai", "model": "x", "reasoningEffort": "max"}}}`).problem).toContain("requires supportedReasoningEfforts");
  });

  test("several problems are reported together, one per line, without a stack trace", () => {
    const error = problem(`{"workDepth": "x", "permissionMode": "y", "extra": true}`);
    const lines = error.message.split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^\/w\/zero-cli\.jsonc:1:\d+: \S+: /);
    expect(error.message).not.toContain("    at ");
  });

  test("a value of the wrong type in a union names the accepted types", () => {
    expect(problem(`{"skills": {"s": 5}}`).problem).toBe("expected a string or an object, got 5");
    expect(problem(`{"skills": {"s": {"path": "./x", "on": true}}}`).keyPath).toBe("skills.s.on");
    expect(problem(`{"workflows": {"w": {"steps": ["plan", {"id": "b", "agent": "build"}]}}}`).keyPath).toBe("workflows.w.steps[1]");
  });
});

describe("JSONC", () => {
  test("comments and trailing commas are accepted", () => {
    const file = check(`// line comment\n{\n  /* block */ "workDepth": "pro", // trailing\n  "plugins": ["./a.ts",],\n}\n`);
    expect(file.workDepth).toBe("pro");
    expect(file.plugins).toEqual(["./a.ts"]);
  });

  test("a syntax error gives the position and the problem in words", () => {
    expect(() => parseJsonc(FILE, `{\n  "workDepth": "pro"\n  "permissionMode": "ask"\n}`)).toThrow(
      `${FILE}:3:3: invalid JSONC: expected ',' between entries`,
    );
    expect(() => parseJsonc(FILE, `{ "a": "open`)).toThrow("unterminated string");
  });

  test("a byte order mark is ignored, also when counting columns", () => {
    expect(check(`\uFEFF{ "workDepth": "pro" }`).workDepth).toBe("pro");
    expect(problem(`\uFEFF{ "workDepth": "x" }`).column).toBe(16);
  });

  test("an empty or comment-only file is an empty configuration", () => {
    expect(check("")).toEqual({});
    expect(check("// nothing yet\n")).toEqual({});
  });

  test("the top level must be an object", () => {
    expect(problem("[1, 2]").message).toBe(`${FILE}:1:1: expected an object, got a list`);
  });
});
