/**
 * What the page inlines: its stylesheet, its small script (sortable tables, charts) and uPlot
 * (MIT, 51 KB minified, read from the installed package once per process). Nothing is fetched.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let uplot: { js: string; css: string } | undefined;

/** uPlot's browser build and stylesheet; empty strings (charts omitted) if the package is missing. */
export function uplotAssets(): { js: string; css: string } {
  if (!uplot) {
    try {
      const req = createRequire(import.meta.url);
      uplot = {
        js: readFileSync(req.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
        css: readFileSync(req.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
      };
    } catch {
      uplot = { js: '', css: '' };
    }
  }
  return uplot;
}

const COLORS = {
  COMPLETED: '#43a047',
  READY: '#1e88e5',
  RUNNING: '#fb8c00',
  SUBMITTED: '#ffcc80',
  RETRIED: '#f4511e',
  FAILED: '#e53935',
  CANCELLED: '#9e9e9e',
  PENDING: '#cfd8dc',
};

export const STATUS_COLORS: Readonly<Record<string, string>> = COLORS;

export const PAGE_CSS = `
:root{color-scheme:light}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1c2430;background:#f6f7f9}
header{background:#1c2430;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px;font-size:20px}header .meta{color:#c9d1dc;font-size:13px}
header .st{font-size:13px}
nav{padding:6px 24px;background:#e8ebf0;font-size:13px}nav a{margin-right:14px;color:#1c4f91;text-decoration:none}
main{padding:8px 24px 40px}
section{background:#fff;border:1px solid #dde2e8;border-radius:6px;margin:14px 0;padding:10px 16px;overflow:hidden}
h2{font-size:16px;margin:4px 0 10px}h3{font-size:14px;margin:14px 0 6px}h3 small{color:#68778a;font-weight:normal}
.note{color:#68778a;font-size:13px}
.scroll{overflow:auto;max-height:640px}
.wide{overflow:auto}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #e3e7ec;padding:3px 10px;text-align:left;white-space:nowrap}
th{background:#f0f2f5;position:sticky;top:0}
table.sortable th{cursor:pointer}table.sortable th[data-dir=asc]::after{content:" ▲"}table.sortable th[data-dir=desc]::after{content:" ▼"}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums}
td.warn{color:#b26a00}td.ok{color:#2e7d32}td.bad{color:#c62828;font-weight:600}
td.detail{white-space:normal;max-width:420px;color:#45505e}
.mono,code,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
.pre{white-space:pre}
pre{background:#f3f4f6;border:1px solid #e3e7ec;border-radius:4px;padding:8px;overflow:auto;max-height:360px}
pre.log{background:#1e222a;color:#e4e7eb}
.st{display:inline-block;padding:0 7px;border-radius:9px;color:#fff;font-size:12px;line-height:18px}
.chips .st{margin-right:6px}
.failure{border-left:4px solid ${COLORS.FAILED};padding-left:12px;margin:10px 0}
.errors pre{border-color:${COLORS.FAILED}}
.legend .st{margin-right:6px}
svg text{font:11px system-ui,-apple-system,"DejaVu Sans",sans-serif;fill:#1c2430}
svg.timeline .axis line{stroke:#e6e9ee}svg.timeline .axis text{text-anchor:middle;fill:#68778a}
svg.timeline .lbl{text-anchor:end}svg.timeline .lbl.never{fill:#9aa5b1}
svg.timeline line.q{stroke:#b0bac5;stroke-width:2;stroke-dasharray:2 2}
svg.timeline rect.boot{fill:#fff;opacity:.45;pointer-events:none}
svg.timeline .mk-ready{fill:#0d47a1;stroke:#fff;stroke-width:1}
svg.timeline .mk-retry{fill:${COLORS.RETRIED};font-weight:700}
svg.timeline rect.bar:hover{stroke:#1c2430;stroke-width:1}
svg.timeline .session line{stroke:#6a1b9a;stroke-width:1.5;stroke-dasharray:6 3}svg.timeline .session text{fill:#6a1b9a;font-weight:600}
svg.timeline .lbl.reused{fill:#6a1b9a}svg.timeline .gap rect{fill:#eef0f4}svg.timeline .gap text{text-anchor:middle;fill:#68778a}
svg.dag .edge{fill:none;stroke:#8796a8;stroke-width:1.2}svg.dag .edge.on-ready{stroke:#1e88e5;stroke-dasharray:5 3}
svg.dag .node text{text-anchor:middle;fill:#fff;font-weight:600}
svg.dag .node rect.s-PENDING+text{fill:#1c2430}
svg.dag .node rect.s-SUBMITTED+text{fill:#1c2430}
svg.strip line{stroke:#dde2e8}svg.strip .ok{fill:${COLORS.COMPLETED}}svg.strip .ko{fill:${COLORS.FAILED}}
.chart{margin:6px 0 14px}.note.bad{color:#c62828}
footer{color:#68778a;font-size:12px;padding:0 24px 24px}
${Object.entries(COLORS)
  .map(([s, c]) => `.st.s-${s}{background:${c}}svg .s-${s}{fill:${c}}`)
  .join('\n')}
.st.s-PENDING{color:#1c2430}
.st.s-SUBMITTED{color:#1c2430}
`;

/** Sortable tables and uPlot charts (the page works without it, minus those two). */
export const PAGE_JS = `(function(){
'use strict';
function cellKey(c){var v=c.getAttribute('data-v');return v!==null?Number(v):c.textContent;}
Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(tb){
  var ths=tb.tHead.rows[0].cells;
  Array.prototype.forEach.call(ths,function(th,i){
    th.addEventListener('click',function(){
      var body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      var dir=th.getAttribute('data-dir')==='asc'?'desc':'asc';
      Array.prototype.forEach.call(ths,function(h){h.removeAttribute('data-dir');});
      th.setAttribute('data-dir',dir);
      var numeric=rows.every(function(r){var c=r.cells[i];return !c||c.getAttribute('data-v')!==null||c.textContent==='';});
      rows.sort(function(a,b){
        var x=a.cells[i]?cellKey(a.cells[i]):'',y=b.cells[i]?cellKey(b.cells[i]):'';
        var c=numeric?(x===''?-Infinity:x)-(y===''?-Infinity:y):String(x).localeCompare(String(y),undefined,{numeric:true});
        if(c!==c)c=0;return dir==='asc'?c:-c;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
var data=document.getElementById('chart-data');
if(!data||typeof uPlot==='undefined')return;
var MARK={start:['#78909c',1],ready:['#1e88e5',1],done:['#2e7d32',0],fail:['#e53935',0],cancel:['#757575',0]};
var PALETTE=['#1e88e5','#e53935','#43a047','#fb8c00','#8e24aa','#00897b','#6d4c41','#3949ab','#c0ca33','#d81b60'];
JSON.parse(data.textContent).forEach(function(c){
  var el=document.getElementById(c.id);if(!el)return;
  var markers={id:'markers',hooks:{draw:[function(u){
    if(!c.markers||!c.markers.length)return;var ctx=u.ctx,r=window.devicePixelRatio||1,lastX=-1e9;ctx.save();
    c.markers.forEach(function(m){var x=u.valToPos(m[0],'x',true);
      if(x<u.bbox.left||x>u.bbox.left+u.bbox.width)return;
      var st=MARK[m[1]]||MARK.start;
      ctx.strokeStyle=st[0];ctx.lineWidth=r;ctx.setLineDash(st[1]?[2*r,3*r]:[]);ctx.beginPath();
      ctx.moveTo(x,u.bbox.top);ctx.lineTo(x,u.bbox.top+u.bbox.height);ctx.stroke();
      if(x-lastX<13*r)return;lastX=x;
      ctx.save();ctx.translate(x+3*r,u.bbox.top+4*r);ctx.rotate(Math.PI/2);ctx.fillStyle=st[0];
      ctx.textAlign='left';ctx.textBaseline='top';
      ctx.font=(10*r)+'px sans-serif';ctx.fillText(String(m[2]).slice(0,48),0,0);ctx.restore();});
    ctx.restore();}]}};
  var width=Math.max(480,Math.min(1100,(el.parentNode.clientWidth||1000)-10));
  var opts={title:c.title,width:width,height:220,plugins:[markers],
    scales:{x:{time:!!c.time,range:c.range?function(u,lo,hi){
      var a=lo==null?c.range[0]:Math.min(lo,c.range[0]),b=hi==null?c.range[1]:Math.max(hi,c.range[1]);
      if(!(b>a)){a-=1;b+=1;}return [a,b];}:undefined},
      y:c.unit==='%'?{range:function(u,lo,hi){return [0,Math.max(100,hi)];}}:{}},
    axes:[{label:c.time?'':'s from run start'},{label:c.unit||''}],
    series:[{label:c.time?'time':'s'}].concat(c.series.map(function(s,i){
      return {label:s.label,stroke:s.color||PALETTE[i%PALETTE.length],width:1.5,spanGaps:!!c.gaps,points:{show:!c.stepped&&c.x.length<80},paths:c.stepped?uPlot.paths.stepped({align:1}):undefined};}))};
  el.uplot=new uPlot(opts,[c.x].concat(c.series.map(function(s){return s.values;})),el);
});
})();`;
