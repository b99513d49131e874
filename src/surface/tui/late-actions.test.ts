import { expect, test } from "bun:test";
import type { Controller } from "./controller.ts";
import { lateActions } from "./late-actions.ts";

test("before attach, Enter holds messages (sent in order on attach), menus wait, the rest does nothing; after, all is the controller's", async () => {
  const calls: string[] = [];
  const controller = {
    submit: (text: string) => (calls.push(`submit:${text}`), "sent"),
    cancel: () => (calls.push("cancel"), true),
    listFiles: async () => ["a.ts"],
    listSkills: async () => [],
  } as unknown as Controller;
  const late = lateActions();
  expect(late.actions.submit("first")).toBe("held");
  expect(late.actions.submit("   ")).toBe("empty");
  expect(late.actions.submit("/model fast")).toBe("held");
  expect(late.actions.cancel()).toBe(false);
  let files: string[] | undefined;
  void late.actions.listFiles().then((listed) => (files = listed));
  await Bun.sleep(10);
  expect(files).toBeUndefined(); // waits for the runtime
  expect(calls).toEqual([]);
  late.attach(controller);
  expect(calls).toEqual(["submit:first", "submit:/model fast"]);
  await Bun.sleep(0);
  expect(files).toEqual(["a.ts"]);
  expect(late.actions.submit("after")).toBe("sent");
  expect(late.actions.cancel()).toBe(true);
  expect(calls.slice(2)).toEqual(["submit:after", "cancel"]);
});
