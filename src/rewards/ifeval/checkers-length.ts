/**
 * Length constraints: words, sentences, paragraphs, characters.
 */
import { compare, num, registerConstraint, relation } from "./registry.ts";
import { paragraphs, sentences, words } from "./text-stats.ts";

/** A markdown divider `***` standing alone between whitespace, on its own line or inline. */
const HAS_DIVIDER = /(?:^|\s)\*\*\*+(?=\s|$)/;

registerConstraint({
  name: "word_count",
  description: "number of words stands in `relation` to `num_words` (default relation: at least)",
  aliases: ["length_constraints:number_words"],
  check(r, p) {
    const n = words(r).length;
    const rel = relation(p.relation);
    const target = num(p, "num_words");
    return { ok: compare(n, rel, target), reason: `${n} words; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "sentence_count",
  description: "number of sentences stands in `relation` to `num_sentences`",
  aliases: ["length_constraints:number_sentences"],
  check(r, p) {
    const n = sentences(r).length;
    const rel = relation(p.relation);
    const target = num(p, "num_sentences");
    return { ok: compare(n, rel, target), reason: `${n} sentences; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "paragraph_count",
  description: "exactly `num_paragraphs` paragraphs (blank-line separated; `divider: true` → separated by ***); `relation` optional",
  aliases: ["length_constraints:number_paragraphs"],
  check(r, p) {
    const divider = p.divider === true || (p.divider === undefined && HAS_DIVIDER.test(r));
    const n = paragraphs(r, divider).length;
    const rel = relation(p.relation, "relation", "exactly");
    const target = num(p, "num_paragraphs");
    return { ok: compare(n, rel, target), reason: `${n} paragraphs; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "char_count",
  description: "number of characters (code points) stands in `relation` to `num_chars`",
  check(r, p) {
    const n = [...r].length;
    const rel = relation(p.relation);
    const target = num(p, "num_chars");
    return { ok: compare(n, rel, target), reason: `${n} characters; required ${rel} ${target}` };
  },
});

registerConstraint({
  name: "first_word_of_paragraph",
  description: "exactly `num_paragraphs` paragraphs (*** separated) and paragraph `nth_paragraph` (1-based) starts with `first_word`",
  aliases: ["length_constraints:nth_paragraph_first_word"],
  check(r, p) {
    const paras = paragraphs(r, HAS_DIVIDER.test(r));
    const want = num(p, "num_paragraphs");
    const nth = num(p, "nth_paragraph");
    const first = String(p.first_word ?? "").toLowerCase();
    if (paras.length !== want) return { ok: false, reason: `${paras.length} paragraphs; required ${want}` };
    const para = paras[nth - 1];
    const got = para ? (words(para)[0] ?? "").toLowerCase() : "";
    return { ok: got === first, reason: `paragraph ${nth} starts with "${got}"; required "${first}"` };
  },
});
