/**
 * Layout constraints: JSON, bullets, title, placeholders, sections, highlights, postscript,
 * two responses, fixed answer options.
 */
import { compare, num, registerConstraint, relation } from "./registry.ts";

registerConstraint({
  name: "json_format",
  description: "the whole response is valid JSON (a surrounding ``` or ```json fence, any case, is allowed)",
  aliases: ["detectable_format:json_format"],
  check(r) {
    const t = r.trim().replace(/^```(?:json)?\s*\n?/i, "").replace(/\n?```\s*$/, "").trim();
    try {
      JSON.parse(t);
      return { ok: true, reason: "valid JSON" };
    } catch (e) {
      return { ok: false, reason: `not JSON: ${(e as Error).message.slice(0, 80)}` };
    }
  },
});

registerConstraint({
  name: "bullet_count",
  description: "exactly `num_bullets` markdown bullet lines (`* ` or `- `); `relation` optional",
  aliases: ["detectable_format:number_bullet_lists"],
  check(r, p) {
    const n = r.split("\n").filter((l) => /^\s*[*-]\s+\S/.test(l) && !/^\s*\*\*\*/.test(l)).length;
    const rel = relation(p.relation, "relation", "exactly");
    const target = num(p, "num_bullets");
    return { ok: compare(n, rel, target), reason: `${n} bullets; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "title",
  description: "contains a title wrapped in double angular brackets, e.g. <<my title>>",
  aliases: ["detectable_format:title"],
  check(r) {
    const ok = /<<[^<>\n]*\S[^<>\n]*>>/.test(r);
    return { ok, reason: ok ? "has a <<title>>" : "no <<title>>" };
  },
});

registerConstraint({
  name: "placeholders",
  description: "at least `num_placeholders` square-bracket placeholders like [address]",
  aliases: ["detectable_content:number_placeholders"],
  check(r, p) {
    const n = (r.match(/\[[^\[\]\n]+\]/g) ?? []).length;
    const rel = relation(p.relation);
    const target = num(p, "num_placeholders");
    return { ok: compare(n, rel, target), reason: `${n} placeholders; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "sections",
  description: "at least `num_sections` sections, each starting with `section_spliter` (default \"Section\") and a number, e.g. SECTION 1",
  aliases: ["detectable_format:multiple_sections"],
  check(r, p) {
    const splitter = String(p.section_spliter ?? p.section_splitter ?? "Section").trim();
    const esc = splitter.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const n = (r.match(new RegExp(`(^|\\n)\\s*["'“‘#*>]*\\s*${esc}\\s*\\d+`, "gi")) ?? []).length;
    const rel = relation(p.relation);
    const target = num(p, "num_sections");
    return { ok: compare(n, rel, target), reason: `${n} "${splitter} N" sections; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "highlighted_sections",
  description: "at least `num_highlights` markdown-highlighted spans (*text* or **text**)",
  aliases: ["detectable_format:number_highlighted_sections"],
  check(r, p) {
    const BOLD = /\*\*[^*\n]*[^*\s][^*\n]*\*\*/g;
    const bold = r.match(BOLD) ?? [];
    const rest = r.replace(BOLD, "");
    const single = rest.match(/\*[^*\n]*[^*\s][^*\n]*\*/g) ?? [];
    const n = bold.length + single.length;
    const rel = relation(p.relation);
    const target = num(p, "num_highlights");
    return { ok: compare(n, rel, target), reason: `${n} highlighted spans; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "postscript",
  description: "contains a postscript starting with `postscript_marker` (default \"P.S.\") at the start of a line",
  aliases: ["detectable_content:postscript"],
  check(r, p) {
    const marker = String(p.postscript_marker ?? "P.S.").trim();
    const esc = marker.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\./g, "\\.?\\s*");
    const ok = new RegExp(`(^|\\n)\\s*${esc}`, "i").test(r);
    return { ok, reason: ok ? `has a ${marker} postscript` : `no ${marker} postscript` };
  },
});

registerConstraint({
  name: "two_responses",
  description: "two different responses separated by a line of six asterisks (******)",
  aliases: ["combination:two_responses"],
  check(r) {
    const parts = r.split(/\n?\s*\*{6}\s*\n?/).map((s) => s.trim());
    while (parts.length > 0 && parts[0] === "") parts.shift();
    while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
    const ok = parts.length === 2 && parts[0] !== "" && parts[1] !== "" && parts[0] !== parts[1];
    return { ok, reason: ok ? "two distinct responses" : `${parts.length} parts separated by ******` };
  },
});

registerConstraint({
  name: "constrained_response",
  description: "contains one of the fixed answers in `options` (default: My answer is yes./no./maybe.)",
  aliases: ["detectable_format:constrained_response"],
  check(r, p) {
    const opts = Array.isArray(p.options) ? (p.options as unknown[]).map(String) : ["My answer is yes.", "My answer is no.", "My answer is maybe."];
    const hit = opts.find((o) => r.includes(o));
    return { ok: hit !== undefined, reason: hit ? `contains "${hit}"` : "none of the fixed answers" };
  },
});
