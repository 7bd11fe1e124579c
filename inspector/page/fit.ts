/**
 * The chart's fit (issue 27 item 3), pure: the whole chart when its text stays at
 * {@link READABLE_PX} or more; else its width, from the top (its text smaller than that on a
 * narrow window: a fit wider than the window cut the full chart ~40% on the right at 1280×800,
 * issue 38).
 */

/** The smallest text size the fit keeps, CSS px. */
export const READABLE_PX = 11;

/** A zoom: scale, then a translation in CSS px. */
export interface Zoom {
  scale: number;
  x: number;
  y: number;
}

/** The zoom that fits a chart of `chart` px, whose smallest text is `smallestFontPx`, into `box`. */
export function fitZoom(
  box: { width: number; height: number },
  chart: { width: number; height: number },
  smallestFontPx: number,
): Zoom {
  const readable = READABLE_PX / smallestFontPx;
  const whole = Math.min(box.width / chart.width, box.height / chart.height);
  const across = box.width / chart.width;
  const scale = whole >= readable ? whole : across;
  return {
    scale,
    x: Math.max(0, (box.width - chart.width * scale) / 2),
    y: whole >= readable ? (box.height - chart.height * scale) / 2 : 0,
  };
}

/** A zoom by `factor` about the point (cx, cy), its scale kept between 0.1 and 4. */
export function zoomAbout(zoom: Zoom, factor: number, cx: number, cy: number): Zoom {
  const next = Math.min(4, Math.max(0.1, zoom.scale * factor));
  return {
    scale: next,
    x: cx - ((cx - zoom.x) * next) / zoom.scale,
    y: cy - ((cy - zoom.y) * next) / zoom.scale,
  };
}
