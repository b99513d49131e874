/**
 * `delegate`: the model's handle on child runs. The tool only validates the call's shape and
 * hands it to the delegation capability of its context; every decision (profile, authority,
 * workspace, budgets) is made there, by the runtime, never by the model's wording.
 *
 * The input is one flat object keyed by `operation` (providers want an object schema at the
 * top); which fields an operation needs is checked here, with a message naming the field.
 */
import { z } from "zod";
import { defineTool, type DelegateCall } from "./define.ts";

export const DELEGATE_OPERATIONS = ["spawn", "schedule", "wait", "inspect", "cancel", "send"] as const;
const DELIVERABLES = ["analysis", "plan", "patch", "review", "test_result"] as const;
/** The most tasks one schedule may hold; concurrency and run ceilings bound it further. */
export const MAX_SCHEDULE_TASKS = 32;
export const MAX_WAIT_MS = 600_000;
export const DEFAULT_WAIT_MS = 30_000;

const text = (max: number) => z.string().trim().min(1).max(max);
const taskName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/, { error: "must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit" });
const runId = z.string().regex(/^run_[A-Za-z0-9_-]{1,80}$/, { error: "must be a child run id (run_…)" });
const artifactRef = z.string().regex(/^artifact:\/\/[0-9a-f]{64}$/, { error: "must be an artifact://<sha256> reference" });

const contextMode = z.union([
  z.enum(["none", "summary", "full"]),
  z.strictObject({ type: z.literal("recent"), turns: z.number().int().min(1).max(50) }),
]);

// The task contract: the same fields for `spawn` and each `schedule` task.
const contract = {
  taskName: taskName.optional(),
  goal: text(4000).optional(),
  deliverable: z.enum(DELIVERABLES).optional(),
  acceptanceCriteria: z.array(text(1000)).max(20).optional(),
  agent: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
    .optional()
    .describe('"auto" (default) or a profile you may delegate to'),
  scope: z
    .strictObject({
      paths: z.array(text(300)).max(50).optional().describe("globs the child may read/find/write, e.g. src/auth/**"),
      components: z.array(text(200)).max(50).optional(),
    })
    .optional(),
  contextMode: contextMode.optional().describe("how much of your conversation the child sees"),
  context: z.array(text(4000)).max(20).optional(),
  artifactRefs: z.array(artifactRef).max(20).optional(),
};

const scheduleTask = z.strictObject({
  id: taskName,
  ...contract,
  dependencies: z.array(taskName).max(MAX_SCHEDULE_TASKS).optional(),
  access: z.enum(["read", "write"]),
});

const input = z
  .strictObject({
    operation: z.enum(DELEGATE_OPERATIONS),
    ...contract,
    background: z.boolean().optional(),
    tasks: z.array(scheduleTask).min(1).max(MAX_SCHEDULE_TASKS).optional(),
    runIds: z.array(runId).min(1).max(64).optional(),
    timeoutMs: z.number().int().min(0).max(MAX_WAIT_MS).optional(),
    runId: runId.optional(),
    message: text(20_000).optional(),
  })
  .superRefine((call, ctx) => {
    const need = (field: keyof typeof call, why = "") => {
      if (call[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `${call.operation} needs ${field}${why}` });
    };
    const only = (allowed: readonly string[]) => {
      for (const field of Object.keys(call)) {
        if (field !== "operation" && !allowed.includes(field)) {
          ctx.addIssue({ code: "custom", path: [field], message: `${call.operation} does not take ${field} (it takes: ${allowed.join(", ")})` });
        }
      }
    };
    const contractFields = Object.keys(contract);
    switch (call.operation) {
      case "spawn":
        only([...contractFields, "background"]);
        need("taskName");
        need("goal");
        need("deliverable");
        if (!call.acceptanceCriteria || call.acceptanceCriteria.length === 0) {
          ctx.addIssue({ code: "custom", path: ["acceptanceCriteria"], message: "spawn needs at least one acceptance criterion (an unstructured prompt is not accepted)" });
        }
        break;
      case "schedule":
        only(["tasks"]);
        need("tasks");
        for (const [index, task] of (call.tasks ?? []).entries()) {
          for (const field of ["goal", "deliverable"] as const) {
            if (task[field] === undefined) ctx.addIssue({ code: "custom", path: ["tasks", index, field], message: `task ${task.id} needs ${field}` });
          }
          if (!task.acceptanceCriteria || task.acceptanceCriteria.length === 0) {
            ctx.addIssue({ code: "custom", path: ["tasks", index, "acceptanceCriteria"], message: `task ${task.id} needs at least one acceptance criterion` });
          }
        }
        break;
      case "wait":
        only(["runIds", "timeoutMs"]);
        need("runIds");
        break;
      case "inspect":
      case "cancel":
        only(["runId"]);
        need("runId");
        break;
      case "send":
        only(["runId", "message", "background"]);
        need("runId");
        need("message");
        break;
    }
  });

export type DelegateInput = z.infer<typeof input>;
export type ScheduleTaskInput = z.infer<typeof scheduleTask>;

const DESCRIPTION = `Run child agents for bounded tasks (explore, plan, patch, test, review); each returns a result envelope whose changed files, artifacts and verification are observed by the runtime.
- spawn {taskName, goal, deliverable, acceptanceCriteria[], agent?, scope?, contextMode?, context[]?, artifactRefs[]?, background?}: foreground waits for the result; background returns childRunId and the result arrives before your next step.
- schedule {tasks}: a dependency graph; independent tasks run in parallel; dependants of a failed task are skipped.
- wait {runIds, timeoutMs?} · inspect {runId} · cancel {runId} · send {runId, message}: a follow-up turn for a finished child.
Delegate only work that is worth a separate agent; the child's profile fixes its model, tools, workspace and permissions.`;

/** Bounds and patterns are enforced on validation (with a message naming the field); the model sees the shape only. */
const VALIDATION_ONLY = new Set(["maxLength", "minLength", "maxItems", "minItems", "pattern", "maximum", "minimum"]);

function compact(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compact);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !VALIDATION_ONLY.has(key)).map(([key, value]) => [key, compact(value)]));
}

/** The schema the model sees: bounds dropped, and schedule tasks described by reference to spawn's fields. */
function modelSchema(generated: Record<string, unknown>): Record<string, unknown> {
  const schema = compact(generated) as { properties: Record<string, Record<string, unknown>> };
  schema.properties.tasks = {
    type: "array",
    description: "schedule: tasks, each {id, the spawn contract fields, dependencies: [ids], access: read|write}",
    items: { type: "object", properties: { id: { type: "string" }, dependencies: { type: "array", items: { type: "string" } }, access: { type: "string", enum: ["read", "write"] } }, required: ["id", "access"] },
  };
  return schema as unknown as Record<string, unknown>;
}

export const delegateTool = defineTool({
  name: "delegate",
  description: DESCRIPTION,
  input,
  modelSchema,
  // A foreground child or a wait runs as long as the child's own deadline allows.
  selfTimed: true,
  classify(call) {
    const who = call.operation === "spawn" ? ` ${call.agent ?? "auto"}` : call.runId ? ` ${call.runId}` : "";
    return { risk: "delegate", operation: "delegate", target: `${call.operation}${who}` };
  },
  async execute(call, ctx) {
    if (!ctx.delegation) throw new Error("delegation is not available in this run");
    const reply = await ctx.delegation(call as DelegateCall, ctx.signal, ctx.callId);
    return { output: JSON.stringify(reply, null, 2) };
  },
});
