/* inkground book: tables that fit their column (loaded on every page: _config.yml sphinx.config.html_js_files).
   Plain JS, no framework, no network. Words in a table never break inside (book/_static/inkground.css); a table
   wider than its column is first set tighter (smaller type and padding, class "ig-tight") and, if it still does
   not fit, shown as one block per row, each cell under its column's label (class "ig-stacked"; the label comes
   from the header row, as a data-label attribute; a long name in code may then wrap after its dots and
   underscores). Refitted when the column's width changes. */
(function () {
  'use strict';
  var TABLES = 'article.bd-article table';

  function labels(table) {
    // the last header row's cells, spread over their colspans
    var head = table.tHead && table.tHead.rows.length ? table.tHead.rows[table.tHead.rows.length - 1] : null;
    var out = [];
    if (!head) return out;
    for (var i = 0; i < head.cells.length; i++) {
      var c = head.cells[i], n = c.colSpan || 1, text = c.textContent.replace(/\s+/g, ' ').trim();
      for (var k = 0; k < n; k++) out.push(text);
    }
    return out;
  }

  function label(table) {
    if (table.dataset.igLabelled) return;
    var names = labels(table);
    var bodies = table.tBodies;
    for (var b = 0; b < bodies.length; b++)
      for (var r = 0; r < bodies[b].rows.length; r++) {
        var cells = bodies[b].rows[r].cells, col = 0;
        for (var c = 0; c < cells.length; c++) {
          var cell = cells[c];
          if (names[col] && !cell.hasAttribute('data-label')) {
            // the cell's content in one box beside its label (shown only when stacked), so that mixed text and
            // code stay one line of text
            cell.setAttribute('data-label', names[col]);
            var l = document.createElement('span'), v = document.createElement('span');
            l.className = 'ig-l'; l.setAttribute('aria-hidden', 'true'); l.textContent = names[col];
            v.className = 'ig-v';
            while (cell.firstChild) v.appendChild(cell.firstChild);
            cell.appendChild(l); cell.appendChild(v);
          }
          col += cell.colSpan || 1;
        }
      }
    // display:block drops a table's semantics in some browsers: say them with roles
    table.setAttribute('role', 'table');
    var rows = table.rows;
    for (var i = 0; i < rows.length; i++) {
      rows[i].setAttribute('role', 'row');
      for (var j = 0; j < rows[i].cells.length; j++) {
        var x = rows[i].cells[j];
        if (!x.hasAttribute('role'))
          x.setAttribute('role', x.tagName === 'TH' ? (x.closest('thead') ? 'columnheader' : 'rowheader') : 'cell');
      }
    }
    table.dataset.igLabelled = '1';
  }

  function soften(table) {
    // a long name in code (inkground_lib.components.metrics.readability.edit_counts) may wrap after its dots,
    // underscores and slashes rather than inside a word: a <wbr> after each
    var codes = table.querySelectorAll('td code');
    for (var i = 0; i < codes.length; i++) {
      var walker = document.createTreeWalker(codes[i], NodeFilter.SHOW_TEXT), nodes = [];
      for (var n = walker.nextNode(); n; n = walker.nextNode()) if (/[._\/]\w/.test(n.nodeValue)) nodes.push(n);
      nodes.forEach(function (node) {
        var parts = node.nodeValue.split(/(?<=[._\/])(?=\w)/), frag = document.createDocumentFragment();
        parts.forEach(function (part, k) {
          if (k) frag.appendChild(document.createElement('wbr'));
          frag.appendChild(document.createTextNode(part));
        });
        node.parentNode.replaceChild(frag, node);
      });
    }
  }

  function box(table) {
    // the column the table must fit: its scroll box (if any), else its parent
    return table.closest('.ink-table-wrap, .pst-scrollable-table-container') || table.parentElement;
  }

  function fits(table) {
    var b = box(table);
    return table.getBoundingClientRect().width <= b.clientWidth + 1 && b.scrollWidth <= b.clientWidth + 1;
  }

  function fit(table) {
    table.classList.remove('ig-tight', 'ig-stacked');
    if (fits(table)) return;
    table.classList.add('ig-tight');
    if (fits(table)) return;
    table.classList.remove('ig-tight');
    label(table);
    if (!table.dataset.igSoft) { soften(table); table.dataset.igSoft = '1'; }
    table.classList.add('ig-stacked');
  }

  function fitAll() {
    var tables = document.querySelectorAll(TABLES);
    for (var i = 0; i < tables.length; i++) fit(tables[i]);
  }

  function start() {
    fitAll();
    var article = document.querySelector('article.bd-article');
    if (article && window.ResizeObserver) {
      var width = article.clientWidth;
      new ResizeObserver(function () {
        if (article.clientWidth !== width) { width = article.clientWidth; fitAll(); }
      }).observe(article);
    } else {
      window.addEventListener('resize', fitAll);
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
  window.addEventListener('load', fitAll);  // fonts and images may change widths
  window.inkgroundFitTables = fitAll;  // for a page that adds tables later
})();

/* Figures open full size on a tap (issue 34): each figure image of a cell's output becomes a link to itself, so a
   phone shows it at its own size, where its text is at least 9 CSS px (the figures draw their smallest text at
   that size or more at 100 dpi). Images already inside a link are left alone. */
(function () {
  'use strict';
  function link(img) {
    if (!img.src || img.closest('a')) return;
    var a = document.createElement('a');
    a.href = img.src;
    a.className = 'ig-full-size';
    a.title = 'Open the figure full size';
    img.parentNode.insertBefore(a, img);
    a.appendChild(img);
  }
  function run() {
    var imgs = document.querySelectorAll('article.bd-article .cell_output img');
    for (var i = 0; i < imgs.length; i++) link(imgs[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();
