// Prompt texts are imported as strings (Bun's text loader), so they are part of
// the bundle and need no file lookup at run time.
declare module "*.md" {
  const text: string;
  export default text;
}
