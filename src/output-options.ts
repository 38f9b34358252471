// How a command reports (--json, --no-color): a types-only file, so the options types the API ships
// can name it without shipping the renderer.

export interface OutputOptions {
  json: boolean;
  color: boolean;
}
