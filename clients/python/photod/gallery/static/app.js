// photod gallery: the timeline of moments, albums and an asset view, kept live by the server's
// events (each change set's change details for the collections on screen). Every text from the
// library goes into the page as text (textContent), never as markup.
"use strict";

const state = {
  view: null,            // {kind: "timeline"} or {kind: "collection", id}
  sections: new Map(),   // collection id -> {el, grid, header, tiles: Map(id -> element), total, loaded}
  nextOffset: 0,         // the next page of moments or of the collection; null when all are shown
  loading: false,
  writable: false,
  photod: "connecting",
  viewer: null,          // the asset shown, {id, fav, ...}
  opening: null,         // the id of the asset the viewer shows or is about to (the last asked for)
  generation: 0,         // bumped when the view changes, to drop answers for the old one
  failed: new Set(),     // images to ask again when photod is back
  epoch: null,           // the gallery server's: another one means it restarted (reload the data)
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

async function api(path, options) {
  const response = await fetch(path, options);
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).error || detail; } catch (_) { /* not JSON */ }
    const error = new Error(detail);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

// Dates on the capture clock: "2019-05-04T13:22:10.054" is shown as written, never converted.
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

function captureDate(local) {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(local || "");
  if (!m) return { day: local || "", time: "" };
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const weekday = DAYS[new Date(Date.UTC(y, mo - 1, d)).getUTCDay()];
  return { day: `${weekday}, ${d} ${MONTHS[mo - 1]} ${y}`, time: m[4] ? `${m[4]}:${m[5]}${m[6] ? ":" + m[6] : ""}` : "" };
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${r}` : `${m}:${r}`;
}

function bytes(n) {
  if (n >= 1048576) return `${(n / 1048576).toFixed(1)} MB`;
  return n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} bytes`;
}

function plural(n, word) { return `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`; }

// Tiles

// A tile's image is asked for when the tile comes within a few rows of the window (the
// browser's own lazy loading reaches much further, and the first screen would wait behind it).
const imageObserver = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    imageObserver.unobserve(e.target);
    const img = e.target.querySelector("img");
    if (img && img.dataset.src) { img.src = img.dataset.src; delete img.dataset.src; }
  }
}, { rootMargin: "400px 0px" });

function makeTile(t) {
  const a = el("a", { class: "tile", href: `/a/${t.id}`, "data-id": t.id, title: "" });
  if (t.exists === false) return a;
  let card = null;
  if (t.trashed) {
    // In Recently Deleted photod draws an asset from its trashed file; one whose file is gone
    // (deleted outside photod) has no image: its name and date are shown instead.
    a.classList.add("trashed");
    card = el("span", { class: "card", hidden: true }, el("span", { class: "card-name", text: t.name }),
      el("span", { text: captureDate(t.localDateTime).day }), el("span", { class: "card-note", text: "no preview" }));
    a.append(card);
  }
  const img = el("img", { alt: "", decoding: "async", draggable: false });
  img.addEventListener("load", () => img.classList.add("loaded"));
  img.addEventListener("error", () => { if (card) { img.remove(); card.hidden = false; } else imageFailed(img, t); });
  img.dataset.src = t.thumb;
  imageObserver.observe(a);
  a.append(img);
  decorate(a, t);
  return a;
}

function decorate(a, t) {
  a.querySelector(".heart")?.remove();
  a.querySelector(".badge")?.remove();
  a.dataset.fav = t.fav ? "1" : "0";
  if (t.fav) a.append(el("span", { class: "heart", text: "♥", title: "Favorite" }));
  if (t.video) a.append(el("span", { class: "badge", text: `▶ ${duration(t.duration)}` }));
}

async function imageFailed(img, t) {
  // Unsupported formats get a label; anything else (photod restarting) is asked again later.
  let status = 0;
  try { status = (await fetch(img.src, { method: "HEAD" })).status; } catch (_) { /* the server is away */ }
  if (status === 415 || status === 422 || status === 404) {
    img.remove();
    const tile = document.querySelector(`.tile[data-id="${t.id}"]`);
    const label = status === 422 ? `${t.format || ""} · damaged` : (t.format || "?");
    if (tile && !tile.querySelector(".noimage")) tile.append(el("span", { class: "noimage", text: label, title: status === 415 ? "photod does not render this format" : "this file cannot be shown" }));
  } else {
    state.failed.add({ img, src: t.thumb });
    // Asked again when photod is back; and a few times meanwhile, when it was not away (a request
    // that timed out on a loaded machine) — else the tile would stay blank.
    const tries = Number(img.dataset.tries || 0) + 1;
    img.dataset.tries = String(tries);
    if (tries <= 4 && state.photod === "connected") setTimeout(retryImages, 1500 * tries);
  }
}

function retryImages() {
  const failed = [...state.failed];
  state.failed.clear();
  for (const { img, src } of failed) if (img.isConnected) img.src = src + (src.includes("?") ? "&" : "?") + "r=" + Date.now();
}

// Sections: a moment of the timeline, or the one grid of a collection

function makeSection(id, headerNodes, tiles, total, token) {
  const header = el("h2", {}, ...headerNodes);
  const grid = el("div", { class: "grid" });
  // token: the change token the tiles reflect; events at or before it are already in them.
  const section = { el: null, grid, header, tiles: new Map(), total, loaded: 0, more: null, token: token ?? -1 };
  section.el = el("section", { class: "moment", "data-id": id }, header, grid);
  appendTiles(section, tiles);
  state.sections.set(id, section);
  return section;
}

function appendTiles(section, tiles) {
  for (const t of tiles) {
    if (section.tiles.has(t.id)) continue;
    const tile = makeTile(t);
    section.tiles.set(t.id, tile);
    section.grid.append(tile);
  }
  section.loaded = section.tiles.size;
  watchSectionEnd(section);
}

// A moment with more tiles than the first page loads the rest as it scrolls into view.
const sectionObserver = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    sectionObserver.unobserve(e.target);
    const id = e.target.dataset.section;
    const section = state.sections.get(id);
    if (section) loadSectionTiles(id, section);
  }
}, { rootMargin: "800px" });

function watchSectionEnd(section) {
  section.more?.remove();
  section.more = null;
  if (section.loaded >= section.total || state.view.kind === "collection") return;   // a collection pages at the end of the page
  section.more = el("div", { class: "more-tiles", "data-section": section.el.dataset.id });
  section.el.append(section.more);
  sectionObserver.observe(section.more);
}

async function loadSectionTiles(id, section) {
  const generation = state.generation;
  try {
    const page = await api(`/api/collection/${encodeURIComponent(id)}?offset=${section.loaded}&limit=200`);
    if (generation !== state.generation) return;
    section.total = page.total;
    appendTiles(section, page.tiles);
  } catch (e) {
    setTimeout(() => watchSectionEnd(section), 2000);
  }
}

function momentHeader(m) {
  const parts = [];
  if (m.photos) parts.push(plural(m.photos, "photo"));
  if (m.videos) parts.push(plural(m.videos, "video"));
  if (m.place) parts.push(m.place);
  else if (m.latitude !== null && m.latitude !== undefined) parts.push(place(m.latitude, m.longitude));
  return [document.createTextNode(captureDate(m.localDate).day), el("span", { class: "sub", text: parts.join(" · ") })];
}

function place(lat, lon) {
  const f = (v, p, n) => `${Math.abs(v).toFixed(4)}° ${v >= 0 ? p : n}`;
  return `${f(lat, "N", "S")}, ${f(lon, "E", "W")}`;
}

// Views

async function show(path, { keepScroll = false } = {}) {
  const m = /^\/c\/([A-Za-z0-9_]+)$/.exec(path);
  const q = path.startsWith("/search") ? new URLSearchParams(path.slice(path.indexOf("?"))).get("q") : null;
  state.view = q ? { kind: "search", id: "search", query: q } : m ? { kind: "collection", id: m[1] } : { kind: "timeline" };
  state.generation += 1;
  state.sections.clear();
  state.nextOffset = 0;
  state.loading = false;
  const scroll = window.scrollY;
  const content = $("content");
  content.replaceChildren();
  for (const a of document.querySelectorAll("#side a")) a.classList.toggle("current", a.getAttribute("href") === path);
  $("where").textContent = state.view.kind === "timeline" ? "Timeline" : "";
  await loadMore();
  if (keepScroll) window.scrollTo(0, scroll);
}

async function loadMore() {
  if (state.loading || state.nextOffset === null) return;
  state.loading = true;
  const generation = state.generation;
  const view = state.view;
  try {
    if (view.kind === "timeline") {
      // The next page after the moments shown (live insertions and removals move the offsets).
      const offset = state.sections.size;
      const page = await api(`/api/moments?offset=${offset}&limit=${offset === 0 ? 3 : 6}`);
      if (generation !== state.generation) return;
      for (const m of page.moments) {
        if (state.sections.has(m.id)) continue;
        $("content").append(makeSection(m.id, momentHeader(m), m.tiles, m.total, m.token).el);
      }
      if (page.total === 0) $("content").replaceChildren(el("p", { class: "empty", text: "No photos yet: photod has indexed nothing in its library." }));
      state.nextOffset = page.nextOffset;
    } else {
      const first = !state.sections.has(view.id);
      const loaded = first ? 0 : state.sections.get(view.id).loaded;
      const page = view.kind === "search"
        ? await api(`/api/search?q=${encodeURIComponent(view.query)}&offset=${loaded}&limit=200`)
        : await api(`/api/collection/${encodeURIComponent(view.id)}?offset=${loaded}&limit=200${first ? "&header=1" : ""}`);
      if (generation !== state.generation) return;
      let section = state.sections.get(view.id);
      if (!section) {
        const c = page.collection || { title: view.id, count: page.total };
        $("where").textContent = c.title;
        section = makeSection(view.id, [document.createTextNode(c.title), el("span", { class: "sub", text: plural(page.total, "item") })], [], page.total, page.token);
        section.header.className = "collection-title";
        if (view.id === "s_recentlyDeleted") {
          section.header.after(el("p", { class: "note", text: "Photos and videos deleted from the library. Each is kept here "
            + "with its favorite and albums until photod's retention period is up (30 days unless photod is set otherwise), "
            + "then deleted for good. Open one to restore it or to delete it now." }));
        }
        $("content").append(section.el);
        sectionObserver.disconnect();
      }
      section.total = page.total;
      for (const t of page.tiles) {
        if (section.tiles.has(t.id)) continue;
        const tile = makeTile(t);
        section.tiles.set(t.id, tile);
        section.grid.append(tile);
      }
      section.loaded = section.tiles.size;
      if (page.total === 0) section.grid.append(el("p", { class: "empty", text: view.kind === "search" ? "Nothing found." : "Nothing here." }));
      state.nextOffset = page.nextOffset;
    }
  } catch (e) {
    if (generation === state.generation) setTimeout(() => { state.loading = false; loadMore(); }, 1500);
    return;
  } finally {
    if (generation === state.generation) state.loading = false;
  }
  // Keep loading while the end of the page is in sight (after the first screen's images).
  if (state.nextOffset !== null) setTimeout(watchMore, 250);
}

// The end of the page coming within 1200 px loads the next page. An observer reports only
// crossings: one reported while a page was loading is dropped (loadMore returns), and an end
// still in sight crosses nothing more however far one scrolls. A comparison of rectangles made
// just after a page's tiles were added could disagree with the observer (the layout settling,
// or at the edge), and the timeline was seen stopped at 9 moments of 44 on a loaded machine. So
// after each page the observer is armed again: it reports where the end is now, by its own
// geometry.
const moreObserver = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadMore(); },
  { rootMargin: "1200px" });
function watchMore() {
  moreObserver.unobserve($("more"));
  moreObserver.observe($("more"));
}
moreObserver.observe($("more"));

// The sidebar

let albumsTimer = null;
function refreshAlbums() {
  clearTimeout(albumsTimer);
  albumsTimer = setTimeout(loadAlbums, 300);
}

async function loadAlbums() {
  let data;
  try { data = await api("/api/albums"); } catch (_) { return; }
  const fill = (list, items) => {
    list.replaceChildren(...items.map((c) => el("li", {}, el("a", { href: `/c/${c.id}`, title: c.path || c.title },
      el("span", { class: "name", text: c.title }), el("span", { class: "count", text: c.count.toLocaleString() })))));
  };
  fill($("smart"), data.smart.filter((c) => c.count > 0 || c.id === "s_favorites" || c.id === "s_recentlyDeleted"));
  fill($("folders"), data.folders);
  fill($("places"), data.places || []);
  $("places").querySelectorAll("li").forEach((li, i) => li.classList.toggle("sub", (data.places[i] || {}).level === 1));
  $("places-title").hidden = !(data.places || []).length;
  fill($("user"), data.user);
  $("user-title").hidden = data.user.length === 0;
  const path = location.pathname;
  for (const a of document.querySelectorAll("#side a")) a.classList.toggle("current", a.getAttribute("href") === path);
}

// Live: the server's events

function applyView(v) {
  const section = state.sections.get(v.id);
  if (!section) return;
  if (v.token !== undefined && v.token <= section.token) return;     // already in what was loaded
  if (v.gone) {
    if (state.view.kind === "collection" && state.view.id === v.id) {
      section.grid.replaceChildren(el("p", { class: "empty", text: "This album is gone." }));
      section.tiles.clear();
    }
    return;
  }
  if (v.reload) { reloadSection(v.id, section); return; }
  for (const id of v.removed) {
    section.tiles.get(id)?.remove();
    section.tiles.delete(id);
  }
  for (const t of v.changed) {
    const tile = section.tiles.get(t.id);
    if (!tile) continue;
    decorate(tile, t);
    const img = tile.querySelector("img");
    if (!img) continue;
    if (img.dataset.src !== undefined) img.dataset.src = t.thumb;           // not asked for yet
    else if (img.getAttribute("src") !== t.thumb) img.src = t.thumb;       // another version of the file
  }
  // Moves and insertions by their index after, ascending, into the tiles that stay. The loaded
  // tiles are a prefix of the collection: what lands beyond it comes with the next page.
  const moving = new Set(v.moved.map((m) => m.id));
  const order = [...section.grid.children].filter((e) => e.classList.contains("tile") && !moving.has(e.dataset.id));
  const placed = [...v.moved, ...v.inserted].sort((a, b) => a.index - b.index);
  for (const t of placed) {
    let node = section.tiles.get(t.id);
    if (t.index > order.length) {
      if (node) { node.remove(); section.tiles.delete(t.id); }
      continue;
    }
    if (!node) {
      node = makeTile(t);
      if (!moving.has(t.id)) node.classList.add("fresh");
      section.tiles.set(t.id, node);
    }
    order.splice(t.index, 0, node);
  }
  section.grid.replaceChildren(...order);
  section.total = v.total;
  section.loaded = section.tiles.size;
  if (v.token !== undefined) section.token = v.token;
  updateCount(section);
  watchSectionEnd(section);
}

function updateCount(section) {
  const sub = section.header.querySelector(".sub");
  if (sub && state.view.kind === "collection") sub.textContent = plural(section.total, "item");
  // A collection emptied while open (the last photo of Recently Deleted deleted or restored) says so.
  if (state.view.kind === "collection" && section.total === 0 && !section.grid.querySelector(".empty")) {
    section.grid.append(el("p", { class: "empty", text: "Nothing here." }));
  } else if (section.total > 0) section.grid.querySelector(".empty")?.remove();
}

async function reloadSection(id, section) {
  try {
    const page = await api(`/api/collection/${encodeURIComponent(id)}?offset=0&limit=200`);
    section.tiles.clear();
    section.grid.replaceChildren();
    section.total = page.total;
    section.token = page.token;
    appendTiles(section, page.tiles);            // the rest as it scrolls, page by page
    updateCount(section);
    if (state.view.kind === "collection") state.nextOffset = page.nextOffset;
  } catch (_) { /* the next event or resync brings it */ }
}

function applyMoments(ev) {
  if (state.view.kind !== "timeline") return;
  for (const id of ev.deleted || []) {
    state.sections.get(id)?.el.remove();
    state.sections.delete(id);
  }
  for (const m of ev.updated || []) {
    const section = state.sections.get(m.id);
    if (section) section.header.replaceChildren(...momentHeader(m));
  }
  for (const m of ev.replaced || []) {
    const section = state.sections.get(m.id);
    if (!section) continue;
    section.tiles.clear();
    section.grid.replaceChildren();
    section.total = m.total ?? m.count;
    section.token = m.token ?? section.token;
    appendTiles(section, m.tiles);
  }
  for (const m of ev.inserted || []) {
    if (state.sections.has(m.id)) continue;
    // Newest first: before the first shown moment older than it (in the page's order); at the
    // end only when every moment is shown.
    const older = [...$("content").querySelectorAll(":scope > .moment")].find((e) => e.dataset.id < m.id);
    if (!older && state.nextOffset !== null) continue;
    const section = makeSection(m.id, momentHeader(m), m.tiles, m.total, m.token);
    section.el.classList.add("fresh");
    if (older) older.before(section.el); else $("content").append(section.el);
    $("content").querySelector(".empty")?.remove();
  }
}

function onChange(ev) {
  // A search's results follow the files: asked again, in place.
  if (state.view.kind === "search" && ev.assets.length) refreshSearch();
  for (const v of ev.views) applyView(v);
  if (ev.moments && Object.keys(ev.moments).length) applyMoments(ev.moments);
  if (ev.albums) refreshAlbums();
  if (state.viewer && state.opening && ev.assets.includes(state.opening)) openAsset(state.opening, { replace: true });
}

let searchTimer = null;
function refreshSearch() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => { if (state.view.kind === "search") show(location.pathname + location.search, { keepScroll: true }); }, 300);
}

let typingTimer = null;
$("search").addEventListener("input", () => {
  clearTimeout(typingTimer);
  typingTimer = setTimeout(() => {
    const q = $("search").value.trim();
    const path = q ? `/search?q=${encodeURIComponent(q)}` : "/";
    history.replaceState(null, "", path);
    show(path);
  }, 250);
});

function setBanner(text) {
  const b = $("banner");
  b.textContent = text || "";
  b.hidden = !text;
}

function reloadData() {
  show(location.pathname.startsWith("/c/") ? location.pathname : "/", { keepScroll: true });
  loadAlbums();
}

function connect() {
  const events = new EventSource("/api/events");
  events.addEventListener("status", (e) => {
    const s = JSON.parse(e.data);
    const was = state.photod;
    if (state.epoch && s.epoch !== state.epoch) reloadData();      // the gallery server restarted
    state.epoch = s.epoch;
    state.photod = s.photod;
    state.writable = s.writable;
    setBanner(s.photod === "connected" ? "" : s.photod === "connecting" ? "connecting to photod…" : "photod is away — reconnecting…");
    if (s.photod === "connected" && was !== "connected") retryImages();
    if (state.viewer) updateActions();
  });
  events.addEventListener("change", (e) => onChange(JSON.parse(e.data)));
  events.addEventListener("resync", reloadData);
  events.onerror = () => { if (events.readyState !== EventSource.OPEN) setBanner("the gallery server is away — reconnecting…"); };
  events.onopen = () => { if (state.photod === "connected") setBanner(""); };
  window.photodEvents = events;
}

// The asset view

function visibleIDs() { return [...document.querySelectorAll("#content .tile")].map((t) => t.dataset.id); }

async function openAsset(id, { replace = false } = {}) {
  state.opening = id;
  let a;
  try { a = await api(`/api/asset/${id}`); } catch (e) { if (!replace && state.opening === id) closeAsset(); return; }
  if (state.opening !== id) return;         // another asset was asked for meanwhile
  const first = !state.viewer || state.viewer.id !== id;
  state.viewer = a;
  $("viewer").dataset.id = id;
  const large = $("large");
  if (first) {
    showActionError("");
    large.hidden = false;
    $("noimage").hidden = true;
    large.classList.remove("loaded");
    large.src = a.thumb;                    // the tile's image at once, then the large one
    const full = new Image();
    full.onload = () => { if (state.viewer && state.viewer.id === id) { large.src = full.src; large.classList.add("loaded"); } };
    full.src = a.large;
  }
  $("playmark").hidden = a.mediaType !== "video";
  const when = captureDate(a.localDateTime);
  $("info-date").textContent = when.day;
  $("info-time").textContent = when.time + (a.utcOffset ? ` (UTC${a.utcOffset})` : "") + (a.dateSource === "fileModified" ? " · from the file's time" : "");
  const facts = $("facts");
  facts.replaceChildren();
  const fact = (name, value) => { if (value) facts.append(el("dt", { text: name }), el("dd", {}, value)); };
  // "NIKON CORPORATION" + "NIKON D750" reads as "NIKON D750"; "Apple" + "iPhone 12" as both.
  const brand = (a.make || "").split(" ")[0].toLowerCase();
  fact("Camera", a.model && brand && a.model.toLowerCase().startsWith(brand) ? a.model : [a.make, a.model].filter(Boolean).join(" "));
  fact("Lens", a.lens);
  if (a.latitude !== null && a.latitude !== undefined) {
    const link = el("a", { href: `https://www.openstreetmap.org/?mlat=${a.latitude}&mlon=${a.longitude}#map=14/${a.latitude}/${a.longitude}`,
      target: "_blank", rel: "noopener noreferrer", text: place(a.latitude, a.longitude) });
    fact("Place", link);
    if (a.altitude !== null && a.altitude !== undefined) fact("Altitude", `${Math.round(a.altitude)} m`);
  }
  if (a.mediaType === "video") {
    fact("Video", [duration(a.duration), a.videoCodec, a.frameRate ? `${Math.round(a.frameRate * 100) / 100} fps` : null, a.audioCodec].filter(Boolean).join(" · "));
  }
  fact("Size", a.width && a.height ? `${a.width} × ${a.height}` : "");
  fact("File", `${a.name} · ${bytes(a.fileSize)} · ${a.format}`);
  fact("Keywords", a.keywords.join(", "));
  if (!a.available) fact("Disk", "offline (its disk is not mounted)");
  if (a.trashed) fact("Where", "Recently Deleted");
  updateActions();
  $("viewer").hidden = false;
  document.body.style.overflow = "hidden";
  if (!replace && location.pathname !== `/a/${id}`) history.pushState({ asset: id, back: state.back }, "", `/a/${id}`);
}

function updateActions() {
  const trashed = !!(state.viewer && state.viewer.trashed);
  $("fav").hidden = trashed;
  updateFavButton();
  $("trash").hidden = !state.writable || trashed;
  $("restore").hidden = !state.writable || !trashed;
  $("purge").hidden = !state.writable || !trashed;
}

function updateFavButton() {
  const fav = $("fav");
  const on = !!(state.viewer && state.viewer.fav);
  fav.textContent = on ? "♥ Favorite" : "♡ Favorite";
  fav.classList.toggle("on", on);
  fav.disabled = !state.writable;
  fav.title = state.writable ? (on ? "Remove from Favorites" : "Add to Favorites") : "read-only: start the gallery with --allow-writes";
}

async function toggleFavorite() {
  if (!state.viewer || !state.writable) return;
  const id = state.viewer.id, favorite = !state.viewer.fav;
  $("fav").disabled = true;
  try {
    await api(`/api/asset/${id}/favorite`, { method: "POST", headers: { "Content-Type": "application/json", "X-Requested-With": "photod-gallery" },
      body: JSON.stringify({ favorite }) });
    if (state.viewer && state.viewer.id === id) state.viewer.fav = favorite;
    for (const section of state.sections.values()) {
      const tile = section.tiles.get(id);
      if (tile) decorate(tile, { fav: favorite, video: !!tile.querySelector(".badge"), duration: state.viewer.duration });
    }
  } catch (e) {
    setBanner(`could not set the favorite: ${e.message}`);
    setTimeout(() => setBanner(""), 4000);
  }
  updateFavButton();
}

// Deleting: to Recently Deleted, and from there back or for good. Each write that cannot be
// taken back in one click asks first, in the page's own dialog; photod's refusal (the root not
// opened to the trash, a file changed since it was read…) is shown in its words.

function post(path) {
  return api(path, { method: "POST", headers: { "X-Requested-With": "photod-gallery" } });
}

function showActionError(text) {
  $("action-error").textContent = text;
  $("action-error").hidden = !text;
}

let toastTimer = null;
function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 5000);
}

let confirming = null;     // {busy, run} while the dialog asks
function confirmThen({ title, text, ok, busy, run }) {
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-error").hidden = true;
  $("confirm-ok").textContent = ok;
  $("confirm-ok").hidden = false;
  $("confirm-ok").disabled = false;
  $("confirm-cancel").textContent = "Cancel";
  $("confirm-cancel").disabled = false;
  confirming = { busy, run, running: false };
  $("confirm").showModal();
  $("confirm-cancel").focus();               // Enter on the question does not delete
}

async function confirmed() {
  const c = confirming;
  if (!c || c.running) return;
  c.running = true;
  $("confirm-ok").disabled = $("confirm-cancel").disabled = true;
  $("confirm-ok").textContent = c.busy;
  try {
    await c.run();
    if (confirming === c) $("confirm").close();
  } catch (e) {
    if (confirming !== c) return;
    c.running = false;
    $("confirm-error").textContent = e.message;
    $("confirm-error").hidden = false;
    $("confirm-ok").hidden = true;
    $("confirm-cancel").textContent = "Close";
    $("confirm-cancel").disabled = false;
    $("confirm-cancel").focus();
  }
}

// The asset the viewer shows after this one leaves: the next tile, else the one before.
// Asked before the write: the change set may take the tile away before photod's answer comes.
function neighbour(id) {
  const ids = visibleIDs();
  const i = ids.indexOf(id);
  return i >= 0 ? ids[i + 1] || ids[i - 1] || null : null;
}

// The asset leaves the view it was in: its tile goes at once (the change set says so too,
// maybe first), and the viewer shows the next one, or closes.
function removed(id, next) {
  for (const section of state.sections.values()) {
    const tile = section.tiles.get(id);
    if (!tile) continue;
    tile.remove();
    section.tiles.delete(id);
    section.total = Math.max(0, section.total - 1);
    section.loaded = section.tiles.size;
    updateCount(section);
  }
  if (!state.viewer || state.opening !== id) return;
  state.viewer = null;        // its buttons act on nothing until the next one is loaded
  if (next) { openAsset(next, { replace: true }); history.replaceState({ asset: next }, "", `/a/${next}`); } else closeAsset();
}

function askTrash() {
  const a = state.viewer;
  if (!a || !state.writable || a.trashed) return;
  confirmThen({
    title: `Delete this ${a.mediaType === "video" ? "video" : "photo"}?`,
    text: `“${a.name}” moves to Recently Deleted: its files stay in their folder under hidden names, and it can be `
      + "restored there until photod's retention period is up (30 days unless photod is set otherwise).",
    ok: "Delete", busy: "Deleting…",
    run: async () => {
      const next = neighbour(a.id);
      await post(`/api/asset/${a.id}/trash`);
      removed(a.id, next);
      toast(`“${a.name}” is in Recently Deleted`);
    },
  });
}

async function restoreAsset() {
  const a = state.viewer;
  if (!a || !state.writable || !a.trashed) return;
  showActionError("");
  $("restore").disabled = true;
  try {
    const next = neighbour(a.id);
    const result = await post(`/api/asset/${a.id}/restore`);
    const renamed = (result.renamed || []).map((r) => r.to.split("/").pop());
    removed(a.id, next);
    toast(renamed.length ? `Restored as “${renamed[0]}” (“${a.name}” was taken)` : `“${a.name}” is back in its folder`);
  } catch (e) {
    showActionError(`Not restored: ${e.message}`);
  } finally {
    $("restore").disabled = false;
  }
}

function askDeleteNow() {
  const a = state.viewer;
  if (!a || !state.writable || !a.trashed) return;
  confirmThen({
    title: "Delete for good?",
    text: `“${a.name}” and every file of it are deleted from the disk now, with its favorite and albums. This cannot be undone.`,
    ok: "Delete now", busy: "Deleting…",
    run: async () => {
      const next = neighbour(a.id);
      await post(`/api/asset/${a.id}/delete`);
      removed(a.id, next);
      toast(`“${a.name}” is deleted`);
    },
  });
}

function closeAsset() {
  state.viewer = null;
  state.opening = null;
  $("viewer").hidden = true;
  $("large").removeAttribute("src");
  document.body.style.overflow = "";
  if (location.pathname.startsWith("/a/")) {
    if (history.state && history.state.asset) history.back(); else { history.replaceState({}, "", "/"); show("/"); }
  }
}

function step(delta) {
  if (!state.viewer) return;
  const ids = visibleIDs();
  const i = ids.indexOf(state.viewer.id);
  const next = ids[i + delta];
  if (next) { openAsset(next, { replace: true }); history.replaceState({ asset: next }, "", `/a/${next}`); }
}

// Navigation

document.addEventListener("click", (e) => {
  const a = e.target.closest("a");
  if (!a || a.target === "_blank" || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  const href = a.getAttribute("href");
  if (!href || !href.startsWith("/")) return;
  e.preventDefault();
  if (href.startsWith("/a/")) { openAsset(href.slice(3)); return; }
  history.pushState({}, "", href);
  if (state.viewer) { state.viewer = state.opening = null; $("viewer").hidden = true; document.body.style.overflow = ""; }
  show(href);
});

window.addEventListener("popstate", () => {
  const path = location.pathname;
  if (path.startsWith("/a/")) { openAsset(path.slice(3), { replace: true }); return; }
  if (state.viewer) { state.viewer = state.opening = null; $("viewer").hidden = true; document.body.style.overflow = ""; }
  const current = state.view && (state.view.kind === "timeline" ? "/" : `/c/${state.view.id}`);
  if (path === "/search") { show(path + location.search); return; }
  if (current !== path) show(path);
});

document.addEventListener("keydown", (e) => {
  if (!state.viewer || $("confirm").open) return;        // the dialog's own keys (Esc cancels it)
  if (e.key === "Escape") closeAsset();
  else if (e.key === "Delete") (state.viewer.trashed ? askDeleteNow : askTrash)();
  else if (e.key === "ArrowRight") step(1);
  else if (e.key === "ArrowLeft") step(-1);
});

$("close").addEventListener("click", closeAsset);
$("fav").addEventListener("click", toggleFavorite);
$("trash").addEventListener("click", askTrash);
$("restore").addEventListener("click", restoreAsset);
$("purge").addEventListener("click", askDeleteNow);
$("confirm-ok").addEventListener("click", confirmed);
$("confirm-cancel").addEventListener("click", () => $("confirm").close());
$("confirm").addEventListener("cancel", (e) => { if (confirming && confirming.running) e.preventDefault(); });
// (The close event comes a task later: the dialog may be open again by then, with a new question.)
$("confirm").addEventListener("close", () => { if (!$("confirm").open) confirming = null; });
$("large").addEventListener("error", () => {
  // No image of it (photod does not render the format, or the files are in Recently Deleted): said.
  const a = state.viewer;
  if (!a || !$("large").getAttribute("src")) return;
  $("large").hidden = true;
  $("noimage").textContent = a.trashed ? "No preview: photod has no image of it (its file is gone, or cannot be read now)."
    : `No preview: photod cannot show this ${a.format || ""} file.`;
  $("noimage").hidden = false;
});
$("prev").addEventListener("click", () => step(-1));
$("next").addEventListener("click", () => step(1));

// Start

(async function start() {
  api("/api/info").then((info) => { state.writable = info.writable; }, () => { /* the events say */ });
  connect();
  const path = location.pathname;
  if (path.startsWith("/a/")) {
    await show("/");
    openAsset(path.slice(3), { replace: true });
  } else {
    if (path === "/search") $("search").value = new URLSearchParams(location.search).get("q") || "";
    await show(path === "/search" ? path + location.search : path);
  }
  // The sidebar after the first screen's tiles have been asked for.
  setTimeout(loadAlbums, 50);
})();
