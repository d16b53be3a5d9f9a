import { expect } from "chai";
import fc from "fast-check";
import { escapeHtml, html, trustedHtml } from "../../src/html/html";

describe("the html template", () => {
  it("escapes every value, so no text can open a tag or leave an attribute", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const out = html`<td title="${text}">${text}</td>`.toString();
        const inner = out.slice('<td title="'.length, -"</td>".length);
        expect(inner.replace('">', "")).to.not.match(/[<>"']/);
      }),
    );
  });

  it("round-trips through the entities it writes", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const decoded = escapeHtml(text).replace(
          /&(lt|gt|quot|#39|amp);/g,
          (_, name: string) => ({ lt: "<", gt: ">", quot: '"', "#39": "'", amp: "&" })[name]!,
        );
        expect(decoded).to.equal(text);
      }),
    );
  });

  it("nests templates and arrays without escaping them twice, and writes nothing for null, undefined and false", () => {
    const items = ["<a>", "b&c"];
    expect(html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>${null}${undefined}${false}`.toString()).to.equal(
      "<ul><li>&lt;a&gt;</li><li>b&amp;c</li></ul>",
    );
    expect(html`${trustedHtml("<b>")}${0}`.toString()).to.equal("<b>0");
  });
});
