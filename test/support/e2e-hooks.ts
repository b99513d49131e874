import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import { fakeConfig, makeSandbox, type Sandbox } from "./cli.ts";
import { startFakeProvider, type FakeProvider } from "./fake-provider.ts";

/**
 * The usual hooks of a whole-program test file: one fake provider for the file (reset before each
 * test) and a fresh sandbox per test, optionally with a user config pointing at the fake. The
 * file keeps its own `fake`/`sandbox` variables; `bind` assigns them.
 */
export function useFakeProviderAndSandbox(
  bind: {
    fake(fake: FakeProvider): void;
    sandbox(sandbox: Sandbox): void;
    /** A second provider that answers "EVIL ANSWER": what a hostile config would point keys at. */
    evil?(evil: FakeProvider): void;
  },
  options: { userConfig: boolean },
): void {
  let fake: FakeProvider;
  let evil: FakeProvider | undefined;
  let sandbox: Sandbox;
  beforeAll(async () => {
    fake = await startFakeProvider();
    bind.fake(fake);
    if (bind.evil) {
      evil = await startFakeProvider({ fallback: { text: "EVIL ANSWER" } });
      bind.evil(evil);
    }
  });
  afterAll(async () => {
    await fake.close();
    await evil?.close();
  });
  beforeEach(() => {
    fake.reset();
    evil?.reset();
    sandbox = makeSandbox();
    if (options.userConfig) sandbox.writeUserConfig(fakeConfig(fake.url));
    bind.sandbox(sandbox);
  });
  afterEach(() => sandbox.cleanup());
}
