// Parts of a page that update themselves: each element with data-live="URL" takes the
// HTML the server renders at URL, fetched again every few seconds while the page shows.
"use strict";
(function () {
  const EVERY_MS = 2000;
  const parts = Array.from(document.querySelectorAll("[data-live]"));
  if (!parts.length) return;
  const last = new Map();
  async function refresh(part) {
    try {
      const answer = await fetch(part.dataset.live, {cache: "no-cache", credentials: "same-origin"});
      if (!answer.ok) return;
      const text = await answer.text();
      if (last.get(part) !== text) {
        last.set(part, text);
        part.innerHTML = text;  // rendered and escaped by the server's templates
        part.dispatchEvent(new CustomEvent("live-updated", {bubbles: true}));
      }
    } catch (error) {
      // the server restarts, or the network is gone: try again at the next tick
    }
  }
  setInterval(() => {
    if (!document.hidden) parts.forEach(refresh);
  }, EVERY_MS);
})();
