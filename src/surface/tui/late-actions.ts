/**
 * What the view's keys do when the screen is up before the runtime (plain `zero` draws first and
 * attaches the controller a moment later): Enter holds the message, sent in order once the
 * controller is attached; the file and skill menus wait for it; everything else does nothing.
 * After `attach`, every action is the controller's.
 */
import type { TuiActions } from "./app.tsx";
import type { Controller } from "./controller.ts";

export function lateActions(): { actions: TuiActions; attach(controller: Controller): void } {
  let controller: Controller | undefined;
  let attached!: () => void;
  const ready = new Promise<void>((resolve) => (attached = resolve));
  const held: string[] = [];
  const actions: TuiActions = {
    submit: (text) => {
      if (controller) return controller.submit(text);
      if (text.trim() === "") return "empty";
      held.push(text);
      return "held";
    },
    cancel: () => controller?.cancel() ?? false,
    answer: (answer) => controller?.answer(answer),
    choose: (name, value) => controller?.choose(name, value),
    command: (name) => controller?.command(name),
    editQueued: (id) => controller?.editQueued(id),
    deleteQueued: (id) => controller?.deleteQueued(id),
    moveQueued: (id, by) => controller?.moveQueued(id, by),
    stopEditing: () => controller?.stopEditing(),
    listFiles: async () => (await ready, controller!.listFiles()),
    listSkills: async () => (await ready, controller!.listSkills()),
  };
  return {
    actions,
    attach(target) {
      controller = target;
      attached();
      for (const text of held.splice(0)) target.submit(text);
    },
  };
}
