/** The first part of a body, on one line, for an error message (HTML tags, scripts and styles dropped). */
export function excerpt(text: string, max = 160): string {
  const flat = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (flat === "") return "(empty body)";
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
