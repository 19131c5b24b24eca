/**
 * A small line chart on a <canvas>: several series (colour per run, dash per metric), nice ticks,
 * linear or log2 x axis, percent y axis, and a hover read-out of the nearest x.
 */
import { fmt, niceTicks } from "./data.ts";

export interface Series {
  label: string;
  color: string;
  dash?: number[];
  x: number[];
  y: number[];
}

export interface ChartOptions {
  percent?: boolean;
  logX?: boolean;
  xLabel?: string;
  /** Draw a marker on every point (for short series such as pass@k curves). */
  markers?: boolean;
}

const PAD = { left: 52, right: 12, top: 10, bottom: 28 };

export class LineChart {
  readonly canvas: HTMLCanvasElement;
  private series: Series[] = [];
  private readonly tip: HTMLDivElement;

  constructor(readonly host: HTMLElement, private readonly o: ChartOptions = {}) {
    this.canvas = document.createElement("canvas");
    this.canvas.className = "plot";
    this.tip = document.createElement("div");
    this.tip.className = "tip";
    this.tip.hidden = true;
    host.append(this.canvas, this.tip);
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => (this.tip.hidden = true));
  }

  setData(series: Series[]): void {
    this.series = series.filter((s) => s.x.length > 0);
    this.canvas.dataset.series = String(this.series.length);
    this.canvas.dataset.points = String(this.series.reduce((a, s) => a + s.x.length, 0));
    this.draw();
  }

  private tx(x: number): number {
    return this.o.logX ? Math.log2(Math.max(x, 1e-12)) : x;
  }

  private bounds(): { x0: number; x1: number; y0: number; y1: number } {
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const s of this.series) {
      for (let i = 0; i < s.x.length; i++) {
        const x = this.tx(s.x[i]!);
        x0 = Math.min(x0, x), x1 = Math.max(x1, x);
        y0 = Math.min(y0, s.y[i]!), y1 = Math.max(y1, s.y[i]!);
      }
    }
    if (x0 === x1) (x0 -= 1), (x1 += 1);
    if (y1 - y0 <= Math.abs(y1) * 1e-9) {
      const d = Math.abs(y0) * 0.1 || 1;
      (y0 -= d), (y1 += d);
    } else {
      const pad = (y1 - y0) * 0.06;
      (y0 -= pad), (y1 += pad);
    }
    if (this.o.percent) {
      // Keep the padding inside [0, 100%] unless the data itself leaves it.
      const lo = Math.min(...this.series.flatMap((s) => s.y));
      const hi = Math.max(...this.series.flatMap((s) => s.y));
      (y0 = Math.max(y0, Math.min(0, lo))), (y1 = Math.min(y1, Math.max(1, hi)));
    }
    return { x0, x1, y0, y1 };
  }

  draw(): void {
    const dpr = window.devicePixelRatio || 1;
    const cs = getComputedStyle(this.host);
    const w = Math.max(200, Math.floor(this.host.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)));
    const h = 220;
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    const g = this.canvas.getContext("2d")!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, w, h);
    const pw = w - PAD.left - PAD.right;
    const ph = h - PAD.top - PAD.bottom;
    g.strokeStyle = "#d0d4da";
    g.lineWidth = 1;
    g.strokeRect(PAD.left + 0.5, PAD.top + 0.5, pw, ph);
    if (this.series.length === 0) {
      g.fillStyle = "#8a929c";
      g.font = "13px system-ui, sans-serif";
      g.textAlign = "center";
      g.fillText("no data yet", PAD.left + pw / 2, PAD.top + ph / 2);
      return;
    }
    const b = this.bounds();
    const X = (x: number) => PAD.left + ((this.tx(x) - b.x0) / (b.x1 - b.x0)) * pw;
    const Y = (y: number) => PAD.top + (1 - (y - b.y0) / (b.y1 - b.y0)) * ph;
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#5b636d";
    // y grid and labels
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const t of niceTicks(b.y0, b.y1, 4)) {
      const y = Math.round(Y(t)) + 0.5;
      g.strokeStyle = "#eef0f3";
      g.beginPath();
      g.moveTo(PAD.left, y);
      g.lineTo(PAD.left + pw, y);
      g.stroke();
      g.fillText(fmt(t, this.o.percent), PAD.left - 6, y);
    }
    // x labels
    g.textAlign = "center";
    g.textBaseline = "top";
    const xt = this.o.logX ? niceTicks(b.x0, b.x1, 6).filter(Number.isInteger).map((e) => 2 ** e) : niceTicks(b.x0, b.x1, 6);
    for (const t of xt) g.fillText(fmt(t), X(t), PAD.top + ph + 6);
    if (this.o.xLabel) {
      g.textAlign = "right";
      g.fillText(this.o.xLabel, PAD.left + pw, PAD.top + ph + 16);
    }
    // series
    g.save();
    g.beginPath();
    g.rect(PAD.left, PAD.top, pw, ph);
    g.clip();
    for (const s of this.series) {
      g.strokeStyle = s.color;
      g.fillStyle = s.color;
      g.lineWidth = 1.8;
      g.setLineDash(s.dash ?? []);
      g.beginPath();
      s.x.forEach((x, i) => (i === 0 ? g.moveTo(X(x), Y(s.y[i]!)) : g.lineTo(X(x), Y(s.y[i]!))));
      g.stroke();
      if (this.o.markers || s.x.length === 1) {
        g.setLineDash([]);
        s.x.forEach((x, i) => {
          g.beginPath();
          g.arc(X(x), Y(s.y[i]!), 3, 0, 2 * Math.PI);
          g.fill();
        });
      }
    }
    g.restore();
  }

  private hover(e: MouseEvent): void {
    if (this.series.length === 0) return;
    const rect = this.canvas.getBoundingClientRect();
    const px = e.clientX - rect.left;
    const b = this.bounds();
    const pw = rect.width - PAD.left - PAD.right;
    const xv = b.x0 + ((px - PAD.left) / pw) * (b.x1 - b.x0);
    const lines: string[] = [];
    let xNear = NaN;
    for (const s of this.series) {
      let best = -1;
      let bd = Infinity;
      s.x.forEach((x, i) => {
        const d = Math.abs(this.tx(x) - xv);
        if (d < bd) (bd = d), (best = i);
      });
      if (best < 0) continue;
      if (Number.isNaN(xNear)) xNear = s.x[best]!;
      lines.push(`<span style="color:${s.color}">■</span> ${escapeHtml(s.label)}: ${fmt(s.y[best]!, this.o.percent)} <small>@${fmt(s.x[best]!)}</small>`);
    }
    this.tip.innerHTML = lines.join("<br>");
    this.tip.hidden = false;
    this.tip.style.left = `${Math.min(px + 12, rect.width - 180)}px`;
    this.tip.style.top = `${e.clientY - rect.top + 12}px`;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}
