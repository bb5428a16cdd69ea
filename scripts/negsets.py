#!/usr/bin/env python3
"""Generated test sets of the two false merges DEV cannot show (issue 28).

Motivation: DEV's boilerplate negatives are 100 documents over two long
disclaimers, and its template negatives are mostly recurring headlines; the
engine keeps both apart (0 % and 1.4 % false merges) while a separate set
from other sources shows 25 % and 9 %. A real feed is full of pages whose
body is a site's boilerplate (a paywall, "video loading", a gallery's one
caption, a press footer around a brief) and of notices written from one form
(a court's hearing notice, a notice of a fine, a weather or price bulletin).
None of the bench's text may enter the repository, so the cases are
generated here, from word lists, passages and forms written for this file.

Design: one seeded `random.Random` drives everything, so a seed gives the
same file byte for byte. Texts are built from templates with alternatives
(`[a|b|c]`, resolved at random; a notice form resolves them once per group so
its instances share one skeleton) and slots (`{city}`, filled from the lists
below). The set mixes, in one arrival order:

- `negative:boilerplate`: groups of 5-30 pages of one site whose body is
  the site's boilerplate (one line to several paragraphs, sometimes with a
  page number or date that changes), each under its own headline; and
  groups of briefs that share one site's long footer;
- `negative:template`: groups of 5-25 notices from one form (9 kinds in
  Chinese, 9 in English, short and long) that differ only in names, dates,
  case numbers, figures or places;
- positives that must keep joining: generated articles reposted with
  another site's header or footer added or removed, retitled, reformatted;
  short posts with repost tags; notices reposted with punctuation, layout or
  a source line changed; boilerplate pages reposted under the same headline.

The set is written in the bench's JSON-lines format (id, title, content,
story, bucket, lang, op) so the bench's scorer reads it; a side file
(`negsets.kinds.tsv`) names each document's finer kind, which `breakdown`
reads to report false merges and recall per kind.

Consequences: generated text is more regular than a real feed (one form's
instances are exactly one skeleton); it measures the two failure modes, not
the whole problem. Unrelated articles are kept below a character 5-gram
Jaccard of 0.5 against each other, as in the bench.

Usage:
  scripts/negsets.py generate OUTDIR [--seed N] [--scale F]
  scripts/negsets.py breakdown SET.jsonl KINDS.tsv PRED.jsonl
"""

import argparse
import datetime
import json
import os
import random
import re
import sys
import textwrap
import unicodedata
from collections import Counter, defaultdict

DEFAULT_SEED = 2028

# ---------------------------------------------------------------------------
# Templates: [a|b|c] alternatives (innermost first), {slot} fillers.
# ---------------------------------------------------------------------------

ALTERNATIVES = re.compile(r"\[([^\[\]]*)\]")


def resolve(rng, template):
    """Resolves every [a|b] alternative of a template (innermost first); an
    empty alternative leaves no double space behind."""
    while True:
        text, count = ALTERNATIVES.subn(lambda m: rng.choice(m.group(1).split("|")), template)
        if count == 0:
            break
        template = text
    text = re.sub(r" {2,}", " ", text)
    text = re.sub(r" ([.,;:])", r"\1", text)
    return re.sub(r" +\n", "\n", text).strip(" ")


def fill(rng, template, slots):
    return resolve(rng, template).format_map(slots)


def pick(rng, items, count):
    return rng.sample(items, min(count, len(items)))


def weighted(rng, pairs):
    total = sum(weight for _, weight in pairs)
    point = rng.random() * total
    for value, weight in pairs:
        point -= weight
        if point <= 0:
            return value
    return pairs[-1][0]


# ---------------------------------------------------------------------------
# Word lists (written for this file).
# ---------------------------------------------------------------------------

ZH_SURNAMES = (
    "王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 高 林 罗 郑 梁 谢 宋 唐 许 韩 冯 邓 曹 "
    "彭 曾 肖 田 董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 金 "
    "石 廖 贾 夏 韦 付 方 白 邹 孟 熊 秦 邱 江 尹 薛 闫 段 雷 侯 龙 史 陶 黎 贺 顾 毛 郝 龚 邵 "
    "万 钱 严 覃 武 戴 莫 孔 向 汤 常 温 康 施 文 牛 樊 葛 邢 安 齐 易 乔 伍 庞 颜 倪 庄 聂 章 "
    "鲁 岳 翟 殷 詹 申 欧阳 司马 上官 诸葛"
).split()
ZH_GIVEN = list(
    "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉萍红鹏辉建文宇浩凯健俊帆帅旭宁坤鑫晨阳"
    "欣怡佳雪梅琳晶婷倩颖慧斌波宏峰志新海亮成晓春冬秋立国荣兰凤子云飞龙嘉泽睿博思雨诗梓涵宸航"
    "铭雯璐卓昊彬舒薇瑶琪柏松毅翔楠蕾莉源锋德振永庆长和福喜乐安蓉菲婉清远东方正"
)
EN_FIRST = (
    "James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard "
    "Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Lisa Matthew Nancy Anthony Betty Mark "
    "Sandra Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin "
    "Amanda Brian Melissa George Deborah Timothy Stephanie Ronald Rebecca Jason Sharon Edward Laura "
    "Jeffrey Cynthia Ryan Amy Jacob Kathleen Gary Angela Nicholas Shirley Eric Brenda Jonathan Emma "
    "Stephen Anna Larry Pamela Justin Nicole Scott Samantha Brandon Katherine Benjamin Christine Samuel "
    "Helen Gregory Debra Alexander Rachel Patrick Carolyn Frank Janet Raymond Maria Jack Olivia Dennis "
    "Heather Jerry Diane Tyler Julie Aaron Joyce Henry Victoria Douglas Ruth Peter Lauren Adam Evelyn "
    "Nathan Hannah Zachary Megan Walter Andrea Kyle Cheryl Harold Jacqueline Carl Martha Arthur Gloria "
    "Gerald Teresa Roger Ann Keith Sara Lawrence Madison Terry Frances Sean Kathryn Christian Janice"
).split()
EN_LAST = (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez "
    "Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark "
    "Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams "
    "Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker "
    "Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper "
    "Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James "
    "Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster "
    "Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher "
    "Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno "
    "West Cole Hayes Bryant Herrera Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall "
    "Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells Vargas Henry Chen Freeman Webb "
    "Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason "
    "Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren"
).split()

ZH_CITIES = (
    "北京 上海 广州 深圳 杭州 南京 苏州 成都 重庆 武汉 西安 郑州 长沙 合肥 济南 青岛 大连 沈阳 "
    "哈尔滨 长春 石家庄 太原 兰州 银川 西宁 昆明 贵阳 南宁 海口 福州 厦门 南昌 宁波 温州 无锡 常州 "
    "徐州 烟台 潍坊 洛阳 襄阳 宜昌 株洲 岳阳 赣州 泉州 漳州 汕头 佛山 东莞 珠海 惠州 中山 绵阳 南充 "
    "遵义 桂林 柳州 保定 唐山 邯郸 大同 包头 鞍山 吉林 齐齐哈尔 芜湖 蚌埠 扬州 镇江 南通 盐城 台州 "
    "嘉兴 湖州 绍兴 金华 九江 上饶 衡阳 常德 湛江 江门 韶关 临沂 济宁 淄博 威海 新乡 南阳 开封 宝鸡 "
    "咸阳 天水 曲靖 大理 丽江 北海 三亚 黄山 安庆 日照 德州"
).split()
ZH_DISTRICTS = (
    "城关区 新华区 长安区 鼓楼区 江北区 南岸区 高新区 经开区 滨海新区 城东区 城西区 开发区 临港新区 "
    "白云区 天河区 越秀区 武侯区 锦江区 雁塔区 碑林区 金水区 二七区 岳麓区 芙蓉区 历下区 市中区 "
    "江宁区 秦淮区 西湖区 拱墅区 思明区 湖里区 鹿城区 海曙区 龙华区 宝安区 南山区 福田区 江汉区 "
    "洪山区 沙坪坝区 渝中区 和平区 河西区 南开区 东城区 西城区 青山区 新城区 老城区 东湖区 青云谱区"
).split()
ZH_TOWN_PARTS = list("桃李柳杨槐松竹梅兰荷枫杏青白石金银水山河湖泉溪岭坪塘湾港桥")
ZH_ROAD_PARTS = (
    "人民 解放 建设 中山 胜利 和平 新华 光明 文化 幸福 长江 黄河 滨河 迎宾 朝阳 东风 红旗 "
    "复兴 振兴 学府 科技 工业 青年 友谊 团结 五一 东环 西环 南环 北环 春风 银杏 梧桐 凤凰"
).split()
ZH_COMPANY_HEADS = (
    "华信 中科 恒泰 金桥 鼎盛 安达 瑞丰 宏远 博华 新城 天润 远景 万通 盛世 同心 润德 星辰 佳和 "
    "永安 正阳 德隆 海纳 泰和 合众 联创 汇通 铭诚 嘉禾 宏达 锦程 信诚 恒通 鑫源 聚力 蓝海 绿源 "
    "祥和 顺达 腾飞 启明 卓越 晨曦 凯旋 益民 诚信 裕丰 惠康 明德 致远 百利 冠华 兴业 昌盛 众邦"
).split()
ZH_COMPANY_TRADES = (
    "科技 建设工程 食品 物流 医药 贸易 置业 环保科技 电子 餐饮管理 商贸 机械制造 纺织 新能源 "
    "文化传媒 农业开发 汽车销售 信息技术 装饰工程 劳务服务 化工 建材 物业管理 供应链管理 "
    "生物科技 网络科技 家具 印务 运输 酒店管理 健康管理 教育咨询 房地产开发 电力工程"
).split()
ZH_COMPANY_TAILS = ["有限公司", "有限公司", "有限公司", "股份有限公司", "有限责任公司"]
ZH_BUREAUS = (
    "交通运输局 发展和改革委员会 教育局 卫生健康委员会 文化和旅游局 农业农村局 生态环境局 "
    "住房和城乡建设局 市场监督管理局 商务局 科学技术局 应急管理局 人力资源和社会保障局 "
    "自然资源和规划局 水务局 城市管理局 民政局 体育局 公安局 税务局"
).split()

EN_CITIES = (
    "Springfield Riverton Fairview Georgetown Madison Clinton Franklin Arlington Salem Greenville "
    "Bristol Oxford Dover Auburn Ashland Burlington Manchester Milton Newport Kingston Jackson "
    "Lexington Marion Dayton Lancaster Plymouth Hudson Chester Canton Warren Clayton Harrison "
    "Florence Winchester Lebanon Shelby Troy Monroe Oakland Richmond Columbia Camden Princeton "
    "Brookfield Westfield Easton Mayfield Hamilton Cleveland Bedford Dalton Elgin Fulton Glendale "
    "Hanover Irvington Jamestown Kenton Lakewood Millbrook Norwood Orland Pomona Quincy Rockport "
    "Sheffield Trenton Union Vernon Waverly Yorktown Ashford Belmont Carlisle Denton Exeter Fremont"
).split()
EN_STATES = (
    "Ohio Indiana Illinois Iowa Kansas Kentucky Missouri Nebraska Oregon Maine Vermont Virginia "
    "Georgia Alabama Texas Colorado Arizona Nevada Michigan Wisconsin Minnesota Tennessee Utah Idaho"
).split()
EN_COUNTIES = (
    "Adams Baker Clark Dade Essex Fayette Grant Hancock Jefferson Knox Lincoln Logan Madison Marion "
    "Monroe Morgan Perry Polk Putnam Union Warren Wayne Greene Lake Pike Scott Shelby Butler Carroll"
).split()
EN_STREETS = (
    "Main Oak Maple Pine Cedar Elm Washington Lake Hill Park Walnut River Church Mill Spring Ridge "
    "Chestnut Highland Sunset Willow Franklin Center Jackson Madison Lincoln Market Union Water Bridge"
).split()
EN_STREET_KINDS = ["Street", "Avenue", "Road", "Boulevard", "Drive", "Lane", "Parkway"]
EN_COMPANY_HEADS = (
    "Northgate Bluewater Redfield Harbor Summit Pinecrest Ironwood Clearview Silverline Oakmont Granite "
    "Westbrook Lakeshore Brightpath Meridian Cobalt Keystone Riverside Stonebridge Evergreen Highland "
    "Crescent Falcon Beacon Sterling Crossroads Tidewater Frontier Horizon Lantern Maplewood Northstar "
    "Palisade Quarry Redwood Sagebrush Timberline Vantage Whitfield Ashgrove Copperleaf Driftwood"
).split()
EN_COMPANY_TRADES = (
    "Logistics Foods Energy Holdings Systems Pharmaceuticals Construction Capital Media Motors "
    "Analytics Materials Retail Health Networks Industries Bancorp Realty Software Chemicals Freight "
    "Dairy Apparel Aerospace Semiconductor Insurance Hospitality Utilities Biotech Outdoor"
).split()
EN_COMPANY_TAILS = ["Inc.", "Corp.", "LLC", "Co.", "Group", "Ltd."]
EN_AGENCIES = [
    "Department of Transportation", "Department of Health", "Environmental Protection Agency",
    "Public Utilities Commission", "Department of Labor", "Board of Education", "Planning Commission",
    "Department of Agriculture", "Housing Authority", "Parks and Recreation Department",
    "Department of Public Safety", "Water Authority", "Department of Commerce",
]

# ---------------------------------------------------------------------------
# Small generators of names, places, dates and figures.
# ---------------------------------------------------------------------------

BASE_DAY = datetime.date(2023, 1, 2)


def zh_name(rng):
    surname = rng.choice(ZH_SURNAMES)
    given = rng.choice(ZH_GIVEN)
    if rng.random() < 0.72:
        given += rng.choice(ZH_GIVEN)
    return surname + given


def zh_masked_name(rng):
    """Court and penalty notices often mask given names: 张某某, 李某."""
    return rng.choice(ZH_SURNAMES) + rng.choice(["某", "某某", "某某"])


def en_name(rng):
    first, last = rng.choice(EN_FIRST), rng.choice(EN_LAST)
    if rng.random() < 0.15:
        return "%s %s. %s" % (first, chr(ord("A") + rng.randrange(26)), last)
    return "%s %s" % (first, last)


def zh_company(rng, city=None):
    head = rng.choice(ZH_COMPANY_HEADS)
    if city is None and rng.random() < 0.6:
        city = rng.choice(ZH_CITIES)
    return (city or "") + head + rng.choice(ZH_COMPANY_TRADES) + rng.choice(ZH_COMPANY_TAILS)


def en_company(rng):
    return "%s %s %s" % (
        rng.choice(EN_COMPANY_HEADS), rng.choice(EN_COMPANY_TRADES), rng.choice(EN_COMPANY_TAILS))


def zh_road(rng):
    return rng.choice(ZH_ROAD_PARTS) + rng.choice(["路", "路", "大道", "街", "东路", "西路", "北路", "南路"])


def zh_town(rng):
    return rng.choice(ZH_TOWN_PARTS) + rng.choice(ZH_TOWN_PARTS) + rng.choice(["镇", "乡", "街道"])


def zh_village(rng):
    return rng.choice(ZH_TOWN_PARTS) + rng.choice(ZH_TOWN_PARTS) + rng.choice(["村", "社区"])


def en_street(rng):
    return "%s %s" % (rng.choice(EN_STREETS), rng.choice(EN_STREET_KINDS))


def en_address(rng):
    return "%d %s" % (rng.randrange(100, 9900), en_street(rng))


def some_day(rng, start=0, span=900):
    return BASE_DAY + datetime.timedelta(days=start + rng.randrange(span))


def zh_date(day, with_year=True):
    if with_year:
        return "%d年%d月%d日" % (day.year, day.month, day.day)
    return "%d月%d日" % (day.month, day.day)


EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]
EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ZH_WEEKDAYS = ["星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"]


def en_date(day, with_year=True):
    if with_year:
        return "%s %d, %d" % (EN_MONTHS[day.month - 1], day.day, day.year)
    return "%s %d" % (EN_MONTHS[day.month - 1], day.day)


def zh_hour(rng):
    return rng.choice(["8时30分", "9时", "9时30分", "10时", "14时", "14时30分", "15时", "上午9时", "下午2时30分"])


def en_hour(rng):
    return rng.choice(["9 a.m.", "9:30 a.m.", "10 a.m.", "11 a.m.", "1:30 p.m.", "2 p.m.", "3 p.m.", "6 p.m.", "7 p.m."])


def one_decimal(rng, low, high):
    return "%.1f" % rng.uniform(low, high)


def two_decimals(rng, low, high):
    return "%.2f" % rng.uniform(low, high)


def thousands(number):
    return "{:,}".format(number)

# ---------------------------------------------------------------------------
# Articles: facts drawn per story, sentences from topic templates.
# ---------------------------------------------------------------------------

ZH_PRODUCTS = (
    "新能源汽车 动力电池 光伏组件 智能家电 工业机器人 芯片封装设备 生物医药 预制菜 跨境电商 "
    "智能穿戴设备 无人机 储能系统 碳纤维材料 医疗器械 农用机械 智能门锁 数控机床 氢燃料电池"
).split()
ZH_TECH = (
    "固态电池 量子通信 人工智能大模型 基因编辑 柔性显示 高温超导 类脑芯片 深海探测 卫星遥感 "
    "智能制造 工业互联网 北斗导航 合成生物 激光雷达 第三代半导体"
).split()
ZH_CROPS = "水稻 小麦 玉米 大豆 茶叶 柑橘 苹果 猕猴桃 草莓 蓝莓 油菜 马铃薯 辣椒 葡萄 樱桃 花生 甘蔗".split()
ZH_FESTIVALS = "樱花节 啤酒节 灯会 美食节 读书节 音乐节 非遗文化周 荷花节 桃花节 风筝节 龙舟赛 庙会 菊花展 冰雪节".split()
ZH_SPORTS = "马拉松 半程马拉松 自行车赛 篮球联赛 足球联赛 游泳比赛 羽毛球公开赛 乒乓球邀请赛 龙舟邀请赛 登山节".split()
ZH_SCHOOL_KINDS = ["第一中学", "第二中学", "第三中学", "实验小学", "外国语学校", "职业技术学院", "第五中学", "师范附属小学"]
ZH_HOSPITAL_KINDS = ["市第一人民医院", "市第二人民医院", "市中心医院", "市妇幼保健院", "市中医院", "市儿童医院", "市人民医院"]


def zh_facts(rng):
    city, city2 = rng.sample(ZH_CITIES, 2)
    day = some_day(rng)
    return {
        "city": city, "city2": city2, "district": rng.choice(ZH_DISTRICTS), "town": zh_town(rng),
        "village": zh_village(rng), "road": zh_road(rng), "road2": zh_road(rng),
        "person": zh_name(rng), "person2": zh_name(rng), "person3": zh_name(rng),
        "company": zh_company(rng, city), "company2": zh_company(rng),
        "bureau": city + "市" + rng.choice(ZH_BUREAUS),
        "n1": rng.randrange(3, 30), "n2": rng.randrange(30, 500), "n3": rng.randrange(500, 9000),
        "n4": rng.randrange(2, 12), "n5": rng.randrange(12, 90),
        "wan": one_decimal(rng, 1.2, 80), "wan2": one_decimal(rng, 1.2, 30), "yi": one_decimal(rng, 1.1, 300),
        "pct": one_decimal(rng, 1.5, 40), "pct2": one_decimal(rng, 1.2, 30),
        "year": day.year + rng.randrange(1, 4), "date": zh_date(day, False), "fulldate": zh_date(day),
        "month": day.month, "km": one_decimal(rng, 2, 60), "line": rng.randrange(1, 21),
        "days": rng.randrange(60, 300),
        "product": rng.choice(ZH_PRODUCTS), "tech": rng.choice(ZH_TECH), "crop": rng.choice(ZH_CROPS),
        "festival": rng.choice(ZH_FESTIVALS), "sport": rng.choice(ZH_SPORTS),
        "school": city + rng.choice(ZH_SCHOOL_KINDS), "hospital": city + rng.choice(ZH_HOSPITAL_KINDS),
        "nth": rng.randrange(2, 40), "station": rng.choice(ZH_TOWN_PARTS) + rng.choice(ZH_TOWN_PARTS),
    }


ZH_TOPICS = {
    "transport": {
        "headlines": [
            "{city}地铁{line}号线[二期|东延段|北延段|一期]{date}开通[运营|初期运营|试运营]",
            "{district}{road}改造[完工|提前完工|全线贯通] [通行效率|通行能力]提升{pct}%",
            "{city}新开{n1}条公交线路 [覆盖|串联]{n2}个[小区|社区]",
            "{city}至{city2}[高速公路|城际铁路|快速路]{town}段[开工建设|主体完工|通过验收]",
            "[记者探访|直击]：{city}{road}[拥堵|停车难]问题[怎么解|有了新解法]",
        ],
        "leads": [
            "{date}，{city}地铁{line}号线[二期|东延段|北延段]工程正式开通运营，全长{km}公里，共设车站{n1}座。",
            "记者从{bureau}获悉，{district}{road}[改造工程|提升工程]已于{date}完工，[道路|主路]由双向四车道拓宽为双向{n4}车道。",
            "为方便[市民出行|群众出行|沿线居民出行]，{city}[公交集团|交通运输部门]自{date}起新开和优化公交线路{n1}条。",
            "[记者|本报记者]{date}从{company}了解到，{city}至{city2}[高速公路|城际铁路]{town}段[已进入|正式进入]主体施工阶段。",
        ],
        "body": [
            "[该线路|该工程|这条线路]总投资约{yi}亿元，[计划|预计]于{year}年[全线建成|全面完工]。",
            "[开通后|建成后]，从{station}站到{city}[火车站|东站|北站]的[通行时间|出行时间]将缩短至{n5}分钟左右。",
            "[沿线|途经]的{n2}个[小区|社区]、{n1}所学校的居民出行将更加便捷。",
            "施工单位{company2}[采用|使用]了[装配式|盾构|智能化]施工工艺，[有效|大大]缩短了工期。",
            "{bureau}相关负责人{person}[介绍|表示]，[下一步|今后]还将[优化|加密]接驳公交线路，[打通|解决]出行“最后一公里”。",
            "[家住|住在]{village}的{person2}[告诉记者|说]：“以前[进城|上班]要换乘两次，现在[一趟就到|坐一趟车就到]了。”",
            "[据统计|数据显示]，[开通首日|试运营首周]客流量达到{wan}万人次。",
            "[为保障|为确保]施工期间交通[安全|顺畅]，交警部门在{road2}等路段设置了{n1}处[临时|交通]指示牌。",
            "[早高峰期间|晚高峰期间]，{road}的平均车速由每小时{n5}公里提高到{n2}公里。",
            "[项目|工程]全线共有桥梁{n1}座、隧道{n4}座，[其中|]最长的隧道长{km}公里。",
            "[目前|截至目前]，{city}[城市轨道交通|公交]运营里程已达{n3}公里。",
            "[市民|乘客]可通过[手机扫码|刷交通卡|数字人民币]等多种方式[乘车|购票]。",
        ],
    },
    "economy": {
        "headlines": [
            "{company}[前三季度|上半年|一季度]营收{yi}亿元 同比增长{pct}%",
            "总投资{yi}亿元 {company}{product}项目在{district}[开工|投产|签约]",
            "{city}[外贸进出口|规模以上工业增加值]同比增长{pct}%",
            "[走进|探访]{company}：[一家|这家]{product}企业的[转型路|突围记]",
            "{city}{product}产业[集群|基地]产值突破{yi}亿元",
        ],
        "leads": [
            "{date}，{company}发布[业绩报告|经营数据]，[前三季度|上半年]实现营业收入{yi}亿元，同比增长{pct}%。",
            "[总投资|计划总投资]{yi}亿元的{company}{product}项目{date}在{city}{district}[正式开工|正式投产]。",
            "记者从{bureau}获悉，[今年前{n4}个月|前三季度]，{city}[外贸进出口总值|规模以上工业增加值]同比增长{pct}%。",
            "在{city}{district}的{company}生产车间里，一条条{product}生产线正[满负荷运转|有序运转]。",
        ],
        "body": [
            "[其中|这其中]，{product}[出口额|销售额]达到{wan}万元，占比{pct2}%。",
            "[项目|该项目]达产后，预计年产值可达{yi}亿元，[新增|带动]就业岗位{n3}个。",
            "公司[董事长|总经理]{person}[介绍|表示]，[企业|公司]今年[研发投入|技术改造投入]同比增长{pct2}%。",
            "[近年来|这几年]，{city}[围绕|聚焦]{product}产业[引进|培育]上下游企业{n2}家。",
            "[订单|产品]已[排到|排满到]{year}年[一季度|上半年]，[工人们|员工们]正在加紧生产。",
            "[业内人士|分析人士]{person2}认为，[市场需求回暖|政策持续发力]是[增长|回升]的主要原因。",
            "[截至|到]{month}月底，全市[市场主体|民营企业]总数达到{wan}万户。",
            "[该公司|企业]产品已[出口|销往]{n5}个国家和地区。",
            "[当地|{district}]还设立了{yi}亿元的产业发展基金，[支持|扶持]中小企业[技术创新|转型升级]。",
            "[与去年同期相比|同比]，[物流成本|生产成本]下降了{pct2}%。",
            "{bureau}[负责人|有关负责人]表示，将继续[优化营商环境|落实减税降费政策]，[稳住|提振]企业信心。",
            "[在|]{district}的产业园里，{n1}家配套企业已[陆续入驻|签约入驻]。",
        ],
    },
    "tech": {
        "headlines": [
            "{city}科研团队在{tech}领域取得[新突破|重要进展]",
            "[国内首条|省内首个]{tech}[中试线|示范项目]在{city}[建成|投用]",
            "{company}发布[新一代|自主研发的]{tech}[产品|平台]",
            "{tech}[赋能|助力]{city}{product}产业[升级|提质增效]",
        ],
        "leads": [
            "[记者|本报记者]从{city}[大学|科技大学|理工大学]获悉，该校{person}教授团队在{tech}[研究|领域]取得[重要进展|新突破]。",
            "{date}，[国内首条|省内首个]{tech}[中试线|示范项目]在{city}{district}[正式建成|投入使用]。",
            "{company}{date}[发布|推出]自主研发的{tech}[平台|系统]，[关键指标|核心性能]达到[国际先进|行业领先]水平。",
        ],
        "body": [
            "[相关成果|研究成果]已发表在[国际学术期刊|国际权威期刊]上，[并|]申请发明专利{n1}项。",
            "[团队|研发团队]历时{n4}年，[攻克了|解决了]{n1}项关键技术难题。",
            "[据介绍|据了解]，[这项技术|该技术]可使[能耗|成本]降低{pct}%以上。",
            "{person2}[博士|研究员]说：“[我们|团队]下一步将[推动|加快]成果[转化|产业化]。”",
            "[目前|眼下]，已有{n2}家企业[提出|表达了]合作意向。",
            "[项目|平台]投用后，[每年|年]可[处理|服务]数据{wan}万条。",
            "{city}[今年|近年来]累计[投入|安排]科技[专项资金|经费]{yi}亿元。",
            "[专家|业内专家]认为，[这一成果|该成果]对{product}产业[具有重要意义|意义重大]。",
            "[全市|当地]高新技术企业[数量|总数]已达{n3}家。",
            "[实验室|研发中心]现有科研人员{n2}名，其中青年人才占{pct2}%。",
        ],
    },
    "agriculture": {
        "headlines": [
            "{city}{town}{crop}[喜获丰收|迎来丰收季|开始采摘]",
            "[小|]{crop}[成了|变成]{village}村民的“[致富果|金疙瘩]”",
            "{city}{wan}万亩{crop}[进入|迎来][收获期|管护关键期]",
            "[农技专家|科技特派员]田间[支招|指导] {town}{crop}[增产|提质]",
        ],
        "leads": [
            "[眼下|连日来]，{city}{town}的{wan}万亩{crop}[陆续成熟|进入收获期]，[田间地头|到处]一派[繁忙|丰收]景象。",
            "[初夏时节|金秋时节]，走进{town}{village}，[成片的|连片的]{crop}[长势喜人|挂满枝头]。",
            "记者从{bureau}了解到，今年全市{crop}种植面积达到{wan}万亩，[预计|有望]总产量同比增长{pct}%。",
        ],
        "body": [
            "[今年|这一季]{crop}[亩产|平均亩产]达到{n3}公斤，比去年[增加|提高]{n2}公斤。",
            "[合作社|种植大户]负责人{person}[说|介绍]：“[今年|这几年]用上了新品种，[收成|品质]一年比一年好。”",
            "[当地|{town}]采取“[合作社+农户|企业+合作社+农户]”模式，带动{n2}户农户增收。",
            "[农技人员|技术人员][深入|走进]田间，[指导|帮助]农户[科学施肥|防治病虫害]。",
            "[通过|借助]电商平台，{crop}[卖到了|销往]全国{n1}个省份。",
            "[每亩|亩均]收入[可达|超过]{n3}元，[比种粮|比过去]多收入{n2}元。",
            "{village}[还|]建起了{n4}座[冷库|烘干房]，[解决了|缓解了]{crop}[储存|保鲜]难题。",
            "[今年以来|近年来]，{city}[累计|共]建成高标准农田{wan}万亩。",
            "[无人机|收割机]在田间[来回穿梭|往来作业]，{n1}台农机[同时|一齐]作业。",
            "[采摘季|收获季][吸引了|带来了]大批游客，[乡村旅游|农家乐]也[火了起来|红火起来]。",
        ],
    },
    "education": {
        "headlines": [
            "{school}新校区[投入使用|正式启用] 新增学位{n3}个",
            "{city}[今年|秋季]新建改扩建中小学{n1}所",
            "{city}[中考|高考]{date}开考 {wan}万名考生[赴考|参加考试]",
            "[课后服务|劳动教育][进校园|有了新花样]：{school}[这样做|的探索]",
        ],
        "leads": [
            "{date}，{school}新校区[正式投入使用|迎来首批学生]，新增学位{n3}个。",
            "记者从{bureau}获悉，[今年|秋季学期]全市新建、改扩建中小学和幼儿园{n1}所。",
            "{date}，{city}[中考|高考]正式开考，全市共有{wan}万名考生参加考试，设{n2}个考场。",
        ],
        "body": [
            "新校区占地{n2}亩，[建有|设有]教学楼、实验楼、[体育馆|图书馆]等设施。",
            "[校长|学校负责人]{person}介绍，学校[今年|]将开设{n1}门[特色课程|校本课程]。",
            "[为做好|为保障]考试[工作|安全]，[公安|交通]部门[在考点周边|在各考点]设置了{n2}个[执勤点|服务点]。",
            "[家长|学生家长]{person2}[说|表示]：“孩子[上学|放学]近了，[我们也|接送也]方便多了。”",
            "[全市|当地][中小学|学校]课后服务[覆盖率|参与率]达到{pct}%以上。",
            "[新学期|今年]全市共招聘[新教师|教师]{n2}名。",
            "[学校|校园]还[配备了|建设了]{n1}间[智慧教室|创客教室]。",
            "[同时|此外]，{bureau}[将|]继续推进[集团化办学|教师交流轮岗]。",
            "[考点|学校]门口，[志愿者|爱心车队]为考生提供[免费|爱心]服务。",
            "{n1}名[优秀教师|骨干教师]被[选派|派驻]到[乡村学校|薄弱学校]支教。",
        ],
    },
    "health": {
        "headlines": [
            "{hospital}新院区{date}[开诊|启用] 开放床位{n3}张",
            "{city}[推出|上线]{n1}项[便民就医|医疗服务]新举措",
            "[医疗专家|医护人员]走进{town} 义诊[服务|惠及]{n2}名群众",
            "{city}[启动|开展]{crop}[季|]健康[宣传|科普]活动",
        ],
        "leads": [
            "{date}，{hospital}新院区[正式开诊|投入使用]，开放床位{n3}张，设置临床科室{n5}个。",
            "记者从{bureau}获悉，[今年|近日]{city}[推出|上线]{n1}项便民就医新举措。",
            "{date}，{hospital}[组织|派出]{n1}名[医疗专家|医护人员]走进{town}开展义诊活动。",
        ],
        "body": [
            "[新院区|医院][引进了|配备了][先进的|一批]医疗设备，总价值{yi}亿元。",
            "[市民|患者]可通过[手机|小程序][预约挂号|查看检查报告]，[平均|]候诊时间缩短{pct}%。",
            "[院长|医院负责人]{person}[介绍|表示]，医院将重点建设{n4}个[重点专科|区域医疗中心]。",
            "[义诊|活动]现场，[专家们|医生们]为群众测量血压、血糖，[并|]发放健康手册{n2}份。",
            "[家住|来自]{village}的{person2}[说|告诉记者]：“[在家门口|不出村]就能看[专家|大医院的医生]，真方便。”",
            "[全市|当地]家庭医生签约服务[覆盖|惠及]{wan}万人。",
            "[医院|院方][还|]开通了{n1}条[急救绿色通道|便民服务专线]。",
            "[截至目前|目前]，[全市|当地]二级以上医院已全部实现[检查结果互认|诊间结算]。",
            "[医生|专家]提醒，[入夏以来|换季时节]要注意[合理膳食|防暑降温]。",
            "[活动|义诊]共[接诊|服务]群众{n2}人次，[免费|]发放药品价值{wan}万元。",
        ],
    },
    "culture": {
        "headlines": [
            "第{nth}届{city}{festival}{date}[开幕|启幕|举行]",
            "{city}[假期|国庆假期|五一假期]接待游客{wan}万人次",
            "[古镇|老街]焕新：{town}[文旅融合|文化旅游][走出新路|迎来新机遇]",
            "{city}博物馆{festival}[特展|主题展][开展|开幕] 展出文物{n2}件",
        ],
        "leads": [
            "{date}，第{nth}届{city}{festival}在{district}开幕，[活动|本届活动]将持续{n1}天。",
            "记者从{bureau}获悉，[假期|节日期间]全市[共|累计]接待游客{wan}万人次，实现旅游收入{yi}亿元。",
            "[漫步|走进]{town}[老街|古镇]，[青石板路|白墙黛瓦][修缮一新|古色古香]，[游人|游客][如织|络绎不绝]。",
        ],
        "body": [
            "本届{festival}设置了{n1}个[主题板块|活动单元]，[举办|安排]各类活动{n2}场。",
            "[游客|市民]{person}[说|表示]：“[这次|今年]带[孩子|家人]来，[玩得|看得]很尽兴。”",
            "[与去年同期相比|同比]，[游客人数|旅游收入]增长{pct}%。",
            "[景区|当地][推出|开通]了{n1}条精品旅游线路，[串联|覆盖]{n2}个[景点|村落]。",
            "[非遗传承人|老手艺人]{person2}在现场[展示|演示]了[剪纸|木雕|竹编|刺绣]技艺。",
            "[当地|{town}][投入|筹集]{wan}万元[修缮|改造]古建筑{n1}处。",
            "[夜间|晚上]，[灯光秀|演出]吸引了[大批|众多]市民[观看|打卡]。",
            "[民宿|酒店][入住率|预订量]达到{pct2}%以上。",
            "[展览|特展]将持续至{month}月底，[市民|观众]可[免费|预约]参观。",
            "[文旅部门|主办方][还|]为游客准备了{n3}份[文创礼品|纪念品]。",
        ],
    },
    "sports": {
        "headlines": [
            "{city}{sport}{date}[鸣枪|开赛] {wan2}万名选手参赛",
            "{city}队[夺得|摘得]全省{sport}[冠军|桂冠]",
            "[全民健身|体育惠民]：{city}新建{n2}个[健身场地|体育公园]",
            "[第{nth}届|]{city}{sport}落幕 {person}[夺冠|卫冕]",
        ],
        "leads": [
            "{date}，{city}{sport}在{district}[鸣枪开跑|正式开赛]，来自{n1}个国家和地区的{wan2}万名选手参赛。",
            "在{date}结束的全省{sport}[决赛|总决赛]中，{city}队以[出色的表现|总分第一的成绩]夺得冠军。",
            "记者从{bureau}了解到，[今年以来|今年]{city}新建和改造[健身场地|体育公园]{n2}个。",
        ],
        "body": [
            "[赛事|比赛]设置[全程|半程|健身跑]等[项目|组别]，[赛道|线路]途经{n1}个[景点|地标]。",
            "[选手|运动员]{person}以{n4}小时{n5}分的成绩[获得|夺得]男子组冠军。",
            "[赛事|比赛]期间，{n3}名[志愿者|工作人员][提供|参与]保障服务。",
            "[主教练|教练]{person2}[说|表示]：“[队员们|孩子们]平时训练很刻苦，[这个成绩|冠军]来之不易。”",
            "[全市|当地]人均体育场地面积达到{pct2}平方米。",
            "[沿途|赛道两旁]，[市民|观众][自发|热情]为选手加油助威。",
            "[医疗|救护]保障组设置了{n1}个医疗点，[配备|安排]医护人员{n2}名。",
            "[这是|本届比赛是][该队|{city}队]第{n4}次[夺得|获得]这一项目的冠军。",
            "[新建的|这些]场地[全部|均][免费|低收费]向市民开放。",
            "[据测算|据统计]，[赛事|比赛]带动[周边|当地]消费{wan}万元。",
        ],
    },
    "environment": {
        "headlines": [
            "{city}[今年|前{n4}个月]空气优良天数达{days}天",
            "{city}{town}[治理|整治]{n1}条[河道|黑臭水体] [水质|生态][明显改善|持续向好]",
            "{city}[启动|开展]春季[植树|造林]行动 [新增|完成]造林{wan2}万亩",
            "[候鸟|珍稀鸟类]“[回家|做客]”：{city}湿地[迎来|观测到]{n3}只[候鸟|白鹭]",
        ],
        "leads": [
            "记者从{bureau}获悉，[今年以来|今年前{n4}个月]，{city}空气质量优良天数达{days}天，同比增加{n1}天。",
            "[经过|通过]{n4}年[治理|整治]，{town}境内的{n1}条[河道|河流]水质[明显改善|稳定达标]。",
            "{date}，{city}[启动|举行][春季|义务][植树|造林]活动，[干部群众|志愿者]{n3}余人[参加|参与]。",
        ],
        "body": [
            "[细颗粒物|PM2.5]平均浓度[下降到|降至]每立方米{n5}微克，同比下降{pct}%。",
            "[当地|{town}][投入|累计投入][资金|治理资金]{yi}亿元，[清淤|疏浚]河道{km}公里。",
            "[护林员|河长]{person}每天[巡河|巡山]{n4}次，[已经|]坚持了{n1}年。",
            "[专家|工作人员][介绍|说]，[今年|这里]观测到的鸟类[种类|数量]比去年增加{pct2}%。",
            "[全市|当地]森林覆盖率[提高到|达到]{pct}%。",
            "[沿河|河道两岸]建起了{km}公里的[绿道|步道]，成了市民[休闲|散步]的好去处。",
            "[今年|下一步]，{city}还将[关停|整治][散乱污企业|污染企业]{n2}家。",
            "[附近居民|市民]{person2}说：“[以前|过去]河水发黑发臭，现在[能看到|又见]鱼虾了。”",
            "[全市|当地][新能源公交车|清洁能源车辆]占比[达到|超过]{pct2}%。",
            "[志愿者们|参与者]共[栽下|种植][树苗|苗木]{n3}株。",
        ],
    },
    "society": {
        "headlines": [
            "{city}警方[破获|侦破]一起[电信诈骗|网络赌博|非法集资]案 涉案金额{wan}万元",
            "{district}[老旧小区改造|适老化改造][惠及|让]{n3}户居民[受益|住得更舒心]",
            "{city}[开通|上线]{n1}个[社区食堂|长者食堂] 老人{n1}元吃顿热乎饭",
            "[暖心|点赞]！{city}[市民|外卖员]{person}[勇救|救起][落水|遇险]儿童",
        ],
        "leads": [
            "[近日|{date}]，{city}[公安局|警方]成功[破获|侦破]一起[电信网络诈骗|非法集资]案，抓获犯罪嫌疑人{n1}名。",
            "记者从{district}[住建部门|街道]了解到，[今年|]该区[启动|推进]老旧小区改造{n1}个，惠及居民{n3}户。",
            "[在|]{district}{village}的[社区食堂|长者食堂]里，[老人们|居民们]正[排队|围坐着]吃午饭。",
        ],
        "body": [
            "[经查|经审讯]，[犯罪嫌疑人|该团伙]以[高额返利|投资理财]为诱饵，[骗取|非法吸收]资金{wan}万元。",
            "[民警|办案民警]{person}[提醒|表示]，[市民|大家]要[提高警惕|谨慎转账]，[不要|切勿]轻信陌生来电。",
            "[改造|工程][内容|项目]包括[加装电梯|更换管网|屋面防水]等{n1}项。",
            "[居民|住户]{person2}[说|高兴地说]：“[电梯|楼道]装好了，[我们|老人]上下楼方便多了。”",
            "[食堂|餐厅]每天[供应|提供]{n1}种菜品，[六十岁以上|七十岁以上]老人[每餐|就餐]可享受优惠。",
            "[目前|截至目前]，[全市|当地]已建成[社区食堂|养老服务站]{n2}个。",
            "[警方|民警][追回|冻结]涉案资金{wan2}万元，[并|已]全部返还[受害群众|群众]。",
            "[街道|社区][还|]组织了{n2}名[志愿者|网格员]入户[走访|服务]。",
            "[该案|案件]目前正在进一步[审理|侦办]中。",
            "[事发时|当时]，{person}[正在|刚好]{road}[送餐|路过]，[听到|看到]呼救后[立即|毫不犹豫]跳入水中。",
        ],
    },
}

ZH_GENERIC = [
    "[据介绍|据了解]，[这是|此举是]{city}[今年|近年来][推进|落实]民生实事的[一项|重要]内容。",
    "[下一步|接下来]，[相关部门|{bureau}]将[继续|进一步][加大|强化][工作力度|监管力度]。",
    "[记者|本报记者]在现场看到，[工作人员|施工人员]正在[有序|紧张]忙碌。",
    "[相关负责人|一位负责人]表示，[将|会]广泛听取[群众|市民]意见，[不断|持续]改进工作。",
    "[专家|业内人士]指出，[这一做法|此举]为[其他地区|同类城市]提供了[有益|可借鉴的]经验。",
    "[不少|很多][市民|网友]对此[表示|纷纷表示][欢迎|点赞]。",
    "[这|此举]也是{city}[优化营商环境|提升城市品质]的具体举措之一。",
    "[截至|到]{month}月底，[相关|各项]工作已完成[年度|全年]任务的{pct}%。",
    "[为|为了][做好|推进]这项工作，[当地|{city}][专门|]成立了工作专班。",
    "[活动|工作]期间，共发放[宣传资料|宣传册]{n3}份，[接受|解答]群众咨询{n2}人次。",
    "[目前|眼下]，[各项|相关][准备|筹备]工作[已经|均已]基本就绪。",
    "[对此|针对这一情况]，[有关部门|{bureau}][已|]制定了[详细|具体]的工作方案。",
]

EN_TOPICS = {
    "transport": {
        "headlines": [
            "{city} [opens|unveils] [new|long-awaited] {project}",
            "[Work begins|Crews break ground] on ${million} million {project} in {city}",
            "{city} adds {n1} bus routes [to serve|linking] [growing suburbs|new neighborhoods]",
            "[Commuters|Drivers] [brace for|face] [delays|detours] as {street} [repairs|rebuild] [begin|starts]",
        ],
        "leads": [
            "{city} [officially opened|opened] its {project} on {weekday}, a {miles}-mile [line|route] that officials say will [cut|shorten] commutes by up to {n5} minutes.",
            "[Construction crews|Work crews] broke ground {weekday} on the ${million} million {project} in {city}, a project [planned|discussed] for more than {n4} years.",
            "The {city} transit [agency|authority] will add {n1} bus routes starting {date}, [extending|expanding] service to {n2} [neighborhoods|stops] that had little or none.",
        ],
        "body": [
            "The project was [funded|paid for] [largely|mostly] by a {pct} percent [sales tax|bond measure] approved by voters in {year}.",
            "\"[This is a big day|This has been a long time coming] for [our city|this community],\" said Mayor {person}.",
            "[Officials|Planners] [expect|estimate] about {n3} [riders|passengers] a day in the first year.",
            "{company} [won the contract|was hired] to build the {project} and [expects|plans] to finish by {season} {year}.",
            "[Some|Several] residents along {street} [raised concerns|complained] about [noise|traffic] during [construction|the work].",
            "The {project} [includes|will include] {n1} [stations|stops], {n4} of them with [park-and-ride lots|covered bike parking].",
            "[Ridership|Traffic] on the [corridor|route] has [grown|risen] {pct} percent since {year2}, according to the {agency}.",
            "[Fares|Tickets] will [cost|remain at] ${fare} [per ride|for a single trip], with [discounts|reduced fares] for students and seniors.",
            "[Drivers|Motorists] should expect [lane closures|delays] on {street} through {month}, [the agency said|officials said].",
            "\"[We listened|We heard] to [residents|riders] and [changed|adjusted] the [design|plan],\" said {person2}, the project's [manager|lead engineer].",
        ],
    },
    "business": {
        "headlines": [
            "{company} to [add|create] {n3} jobs with new {city} [plant|facility]",
            "{company} [reports|posts] {pct} percent [rise|jump] in [quarterly|annual] [sales|revenue]",
            "{city} [retailers|small businesses] [see|report] [strong|mixed] [holiday|summer] season",
            "{company} [agrees to buy|to acquire] {company2} for ${million} million",
        ],
        "leads": [
            "{company} said on {weekday} it will [invest|spend] ${million} million on a new [plant|facility] in {city}, creating about {n3} jobs over {n4} years.",
            "{company} reported a {pct} percent [rise|increase] in [quarterly|third-quarter] revenue on {weekday}, [beating|topping] [analysts' estimates|expectations].",
            "[Shop owners|Retailers] in downtown {city} say [sales|foot traffic] [rose|were up] this [season|year], [though|but] [rising costs|higher rents] [ate into|squeezed] [profits|margins].",
            "{company} agreed to [buy|acquire] {company2} for about ${million} million, the companies said on {weekday}.",
        ],
        "body": [
            "The [company|firm] [employs|has] about {n3} people [nationwide|in {state}].",
            "\"[We see|There is] [strong demand|a lot of room to grow] in this [market|region],\" chief executive {person} said [in a statement|on a call with analysts].",
            "[Shares|The stock] [rose|fell] {pct2} percent to ${price} in [afternoon|morning] trading.",
            "The [state|county] [offered|approved] ${million2} million in [tax credits|incentives] to [win|secure] the project.",
            "{person2}, who owns a [bakery|hardware store|bookshop] on {street}, said [business|sales] were up about {pct2} percent from last year.",
            "[Net income|Profit] [came in at|was] ${million2} million, or ${eps} a share, [compared with|up from] ${eps2} a year earlier.",
            "[Construction|Work on the site] is [expected|scheduled] to begin in {month} and [finish|wrap up] in {year}.",
            "[Analysts|Industry watchers] [said|noted] the [deal|move] would give {company} a [bigger|stronger] [foothold|presence] in the {product} market.",
            "The [acquisition|deal] [still needs|requires] [regulatory approval|the approval of shareholders] and is expected to close in {season}.",
            "[Local officials|The mayor] [called|described] the [announcement|investment] [a major win|good news] for [the region|{city}].",
        ],
    },
    "schools": {
        "headlines": [
            "{city} school board [approves|adopts] ${million} million budget",
            "[New|Renovated] {school} [opens its doors|welcomes students] [this fall|on {weekday}]",
            "{city} [teachers|bus drivers] [reach|ratify] [tentative|new] contract",
            "[Students|Teens] at {school} [build|design] [robots|a solar car] [for|ahead of] state contest",
        ],
        "leads": [
            "The {city} school board [voted|approved] {n4}-{n1} on {weekday} to [adopt|pass] a ${million} million budget for the [coming|next] school year.",
            "[More than|About] {n3} students [started classes|walked through the doors] at the [new|renovated] {school} on {weekday}.",
            "[Teachers|Bus drivers] in {city} reached a tentative [agreement|contract] with the district late {weekday}, [ending|averting] [weeks of|a] [talks|possible strike].",
        ],
        "body": [
            "The budget [includes|sets aside] ${million2} million for [teacher raises|building repairs|new buses].",
            "\"[Our kids|Our students] [deserve|need] [safe|modern] [classrooms|schools],\" said board president {person}.",
            "The [building|school] has {n2} classrooms, a [library|science wing] and a [gym|theater] that [seats|holds] {n3}.",
            "[Under|Under the terms of] the [deal|contract], [teachers|drivers] would get [raises|pay increases] of {pct2} percent over {n4} years.",
            "[Enrollment|The number of students] in the district has [grown|fallen] {pct} percent since {year2}.",
            "[Parents|Some parents] [told|urged] the board to [keep|restore] [music|art|after-school] programs.",
            "{person2}, a [junior|senior] at {school}, said the [team|club] [spent|worked] {n5} hours on the project.",
            "[The union|Members] [will vote on|are expected to ratify] the [agreement|contract] next week.",
            "[Property owners|Homeowners] would pay about ${fare} more a year under the [plan|budget].",
            "[The district|Officials] [also plans|also hopes] to hire {n1} [counselors|nurses] next year.",
        ],
    },
    "health": {
        "headlines": [
            "{hospital} [opens|unveils] new [emergency department|cancer center|maternity wing]",
            "[County|{city}] health officials [urge|remind] residents to [get flu shots|test for radon]",
            "[Free|Mobile] [health clinic|dental clinic] [to visit|comes to] {city} [this week|on {weekday}]",
            "{hospital} [to cut|will add] {n2} jobs [amid|as] [rising costs|growing demand]",
        ],
        "leads": [
            "{hospital} [opened|unveiled] a ${million} million [emergency department|cancer center] on {weekday}, [doubling|expanding] the space [for patients|for care].",
            "[Health officials|The county health department] in {city} are [urging|asking] residents to [get vaccinated|get flu shots] after [cases|infections] rose {pct} percent in {n4} weeks.",
            "A [free|mobile] [health clinic|dental clinic] will [visit|stop in] {city} on {weekday}, offering [checkups|screenings] to [anyone|residents] without insurance.",
        ],
        "body": [
            "The [new wing|center] has {n2} [beds|treatment rooms] and [will employ|will add] {n1} [nurses|staff].",
            "\"[Patients|Families] [used to|had to] drive {n5} miles for this [care|treatment],\" said Dr. {person}, the [hospital's|center's] medical director.",
            "[Last year|In {year2}] the hospital [treated|saw] about {n3} patients in its emergency room.",
            "[Flu shots|Vaccines] are [free|available at no cost] at [county clinics|pharmacies] [for|to] residents over {n1}.",
            "[Volunteers|Organizers] expect to [see|serve] about {n2} people [in two days|over the weekend].",
            "{person2}, a [nurse|volunteer] who has [worked|helped] at the clinic for {n4} years, said [demand|the need] keeps growing.",
            "The [project|expansion] was [paid for|funded] in part by a ${million2} million [donation|gift] from the {person3} family.",
            "[Health officials|Doctors] [recommend|advise] [washing hands|staying home when sick] to [limit|slow] the spread.",
            "The [hospital|health system] said the [cuts|changes] would not [affect|touch] [patient care|nursing staff].",
            "[Appointments|Visits] can be made by calling the [clinic|health department] [or online|or walking in].",
        ],
    },
    "local": {
        "headlines": [
            "{city} council [approves|rejects] [plan|proposal] for {project}",
            "[Residents|Neighbors] [pack|fill] hearing on {street} [development|rezoning]",
            "{city} [sets|unveils] ${million} million [plan|budget] to fix [roads|parks|water lines]",
            "[Longtime|Beloved] {city} [diner|bookstore|hardware store] [to close|closes] after {n5} years",
        ],
        "leads": [
            "The {city} City Council voted {n4}-{n1} on {weekday} to [approve|reject] a [plan|proposal] for {project} on {street}.",
            "[More than|About] {n2} residents [packed|filled] a [public hearing|council meeting] on {weekday} to [speak on|weigh in on] a plan to [rezone|redevelop] land along {street}.",
            "{city} officials [unveiled|released] a ${million} million plan on {weekday} to [repair|fix] [roads|water lines|parks] over the next {n4} years.",
            "A [diner|bookstore|hardware store] that has [served|been part of] {city} for {n5} years will close [at the end of|in] {month}, its owner said.",
        ],
        "body": [
            "[Supporters|Backers] said the [project|plan] would [bring|add] {n3} [homes|jobs] and [new life|tax revenue] to the [area|neighborhood].",
            "\"[We are not against growth|Nobody is against change],\" said {person}, who has lived on {street} for {n5} years.",
            "The [plan|proposal] [calls for|includes] {n2} [apartments|housing units] and [ground-floor shops|a small park].",
            "[Council member|Alderman] {person2} [voted against|opposed] the [measure|plan], citing [traffic|parking|cost].",
            "[Money for|Funding for] the [work|plan] would come from a {pct} percent [increase|rise] in [water rates|property taxes].",
            "The [owner|owners], {person3}, said [rising rent|higher costs] and [fewer customers|a labor shortage] [made|forced] the decision.",
            "The [city|council] [will hold|plans] a second [hearing|vote] on {date}.",
            "[City engineers|Officials] said about {pct2} percent of [city streets|the pipes] are in [poor|fair] condition.",
            "[Regulars|Customers] [lined up|came by] [all week|on {weekday}] to [say goodbye|share memories].",
            "The [site|property] has been [empty|vacant] since {year2}, according to [county records|city records].",
        ],
    },
    "weather_news": {
        "headlines": [
            "[Storm|Severe storms] [knock out|leave] power [to|for] {n3} in {county} County",
            "[Heavy rain|Flooding] [closes|shuts] roads [across|in] {city} area",
            "[Record heat|Heat wave] [grips|bakes] {state}[; cooling centers open|]",
            "[Snowstorm|Winter storm] [dumps|drops] {n4} inches on {city}",
        ],
        "leads": [
            "[A line of|Strong] storms [swept|moved] through {county} County on {weekday}, [knocking out|cutting] power to [about|more than] {n3} [homes and businesses|customers].",
            "[Heavy rain|Flash flooding] [closed|shut] [dozens of|{n2}] roads [around|in] {city} on {weekday} as [creeks|rivers] [rose|spilled over their banks].",
            "[Temperatures|Highs] [reached|topped] {temp} degrees in {city} on {weekday}, [breaking|tying] a record set in {year2}.",
        ],
        "body": [
            "[Utility crews|Crews from {company}] [expected|hoped] to [restore|bring back] power to most [customers|homes] by [{weekday} night|the weekend].",
            "The National Weather Service [reported|measured] [wind gusts|rain] of up to {n5} [mph|inches] [near|in] {city2}.",
            "\"[I've never seen|We have not seen] [water|a storm] like this [in {n5} years|here before],\" said {person}, who lives near {street}.",
            "[No injuries were reported|Two people suffered minor injuries], [officials|the sheriff's office] said.",
            "[Cooling centers|Shelters] [opened|will stay open] at {n1} [libraries|community centers] [through|until] {weekday}.",
            "[Emergency officials|The county] [urged|asked] drivers to [avoid|stay off] [flooded roads|travel] [if possible|overnight].",
            "[Forecasters|The weather service] [expect|said] [more rain|cooler weather] [by|on] {weekday}.",
            "{person2}, [a county emergency manager|the fire chief], said [crews|firefighters] [rescued|helped] {n1} people from [stalled cars|flooded homes].",
            "[Schools|Several districts] [closed|delayed opening] on {weekday} because of [the storm|the conditions].",
            "[Damage|Losses] [was estimated|could reach] at ${million} million, [according to|said] [county officials|the mayor].",
        ],
    },
    "sports": {
        "headlines": [
            "{school} [wins|captures] state [title|championship] in [overtime|a thriller]",
            "{city} [marathon|half marathon] [draws|attracts] {n3} runners",
            "[Local|{city}] [swimmer|runner|wrestler] {person} [heads to|qualifies for] nationals",
            "{city} [breaks ground|votes] on ${million} million [sports complex|ballpark]",
        ],
        "leads": [
            "{school} [beat|defeated] [its rival|{school2}] {n5}-{n1} on {weekday} to [win|capture] its first state [title|championship] in {n4} [decades|years].",
            "[About|More than] {n3} runners [took part|ran] in the {city} [marathon|half marathon] on {weekday}, [a record for|the most in the history of] the race.",
            "{person}, a [senior|junior] at {school}, [will compete|qualified to compete] at the national championships [next month|in {month}].",
        ],
        "body": [
            "{person2} [scored|added] {n1} points, [including|with] the [winning|go-ahead] [basket|goal] [with|in the final] {n4} seconds [left|remaining].",
            "\"[These kids|This team] [never gave up|worked so hard],\" coach {person3} said [after the game|afterward].",
            "The [winner|men's winner] [finished|crossed the line] in {n4} hours, {n5} minutes.",
            "[Race organizers|Organizers] said the event [raised|brought in] ${million2} thousand for [local charities|the children's hospital].",
            "[The team|The school] [finished|ended] the season {n5}-{n1}.",
            "{person} [trains|practices] {n4} hours a day [before school|six days a week].",
            "The [complex|facility] will [include|have] {n1} [fields|courts] and [seating for|room for] {n3} [fans|spectators].",
            "[Hundreds of|Many] [fans|students] [greeted|met] the team [at the school|when the bus arrived] [on {weekday}|that night].",
            "[Streets|Roads] [along the route|downtown] [will be|were] closed from {hour} to [noon|1 p.m.].",
            "[The city|Officials] [expects|hope] the [complex|tournaments] to [bring|draw] ${million2} million a year to [hotels and restaurants|local businesses].",
        ],
    },
    "environment": {
        "headlines": [
            "{city} [plants|to plant] {n3} trees [in|along] [parks|streets]",
            "[Cleanup|Restoration] of {river} [River|Creek] [reaches|nears] [milestone|completion]",
            "{city} [launches|expands] [curbside composting|recycling] program",
            "[State|{state}] [fines|cites] {company} over [pollution|wastewater] [violations|discharge]",
        ],
        "leads": [
            "{city} will plant {n3} trees [along streets|in parks] over the next {n4} years, [officials|the mayor] announced {weekday}.",
            "[Crews|Volunteers] have removed [about|more than] {n2} tons of [debris|trash] from the {river} [River|Creek] since [work|the cleanup] began in {year2}.",
            "{city} [will begin|is expanding] [curbside composting|recycling pickup] [to|for] {n3} more homes on {date}.",
        ],
        "body": [
            "The [program|project] will cost about ${million} million, [much of it|most of it] [from|covered by] [a state grant|federal funds].",
            "\"[Trees|Clean water] [make|makes] [neighborhoods|our city] [cooler|healthier],\" said {person}, the city's [forester|sustainability director].",
            "[Tree cover|Canopy] in the city has [fallen|dropped] to {pct} percent, [below|short of] a goal of {pct2} percent.",
            "[Fish|Herons|Otters] have [returned|been spotted] [to|along] [stretches|parts] of the [river|creek] [for the first time in|after] {n5} years.",
            "[Residents|Households] [will get|receive] a [green|brown] bin and [weekly|biweekly] pickup [at no extra cost|for ${fare} a month].",
            "{person2}, who [leads|organizes] a [neighborhood|volunteer] group, said {n2} people [turned out|showed up] for the last [cleanup|planting].",
            "The [city|program] [diverted|kept] {n3} tons of [food waste|material] out of the landfill last year.",
            "[Environmental groups|Advocates] [praised|welcomed] the [plan|step] but said [more|faster] [action|work] is needed.",
            "[Residents|Homeowners] can [request|sign up for] a free tree [online|by calling the city].",
            "The [work|project] is [expected|scheduled] to [finish|be completed] by {season} {year}.",
        ],
    },
}

EN_GENERIC = [
    "[Officials|City officials] said [more details|a full schedule] would be [released|posted] [later this month|in the coming weeks].",
    "The [plan|project] [still needs|must win] [final approval|a vote] from the [county|state] [board|commission].",
    "[Residents|The public] can [comment|weigh in] at a meeting on {date} at {hour} at [city hall|the public library].",
    "[A spokesperson|A spokeswoman|A spokesman] for the [city|county|company] did not [immediately|] respond to a request for comment.",
    "[The|This] [announcement|decision] [comes|came] [after|amid] [months of|years of] [debate|planning].",
    "[Similar|Comparable] [programs|projects] in [other cities|nearby towns] have [had mixed results|been popular].",
    "\"[We're excited|We're proud] to [see this happen|get this done],\" said {person3}.",
    "[Information|More information] is available [on the city's website|at city hall].",
    "[Last year|In {year2}], [a similar|an earlier] [proposal|effort] [failed|stalled] [over cost|for lack of money].",
    "[Officials|Organizers] [thanked|praised] [volunteers|residents] for their [patience|support].",
]

EN_RIVERS = "Cedar Maple Willow Stony Bear Elk Fox Otter Mill Pine Clear Silver Sandy Rock Deer Turkey".split()
EN_PRODUCTS = "electric vehicle, battery, solar panel, medical device, software, packaging, pet food, outdoor gear, semiconductor, frozen food, furniture".split(", ")
EN_SCHOOL_KINDS = ["High School", "Middle School", "Elementary School", "Academy", "Community College"]
EN_HOSPITAL_KINDS = ["Regional Medical Center", "General Hospital", "Community Hospital", "Memorial Hospital", "Children's Hospital"]
EN_PROJECTS = [
    "light rail line", "bus rapid transit line", "downtown streetcar", "riverfront trail", "parking garage",
    "bridge replacement", "highway interchange", "bike lane network", "affordable housing complex",
    "mixed-use development", "community center", "public library branch", "water treatment plant",
]
EN_SEASONS = ["spring", "summer", "fall", "winter"]


def en_facts(rng):
    city, city2 = rng.sample(EN_CITIES, 2)
    day = some_day(rng)
    return {
        "city": city, "city2": city2, "state": rng.choice(EN_STATES), "county": rng.choice(EN_COUNTIES),
        "street": en_street(rng), "person": en_name(rng), "person2": en_name(rng), "person3": en_name(rng),
        "company": en_company(rng), "company2": en_company(rng), "agency": "state " + rng.choice(EN_AGENCIES),
        "n1": rng.randrange(2, 12), "n2": rng.randrange(12, 400), "n3": rng.randrange(400, 9000),
        "n4": rng.randrange(2, 9), "n5": rng.randrange(12, 80),
        "million": one_decimal(rng, 1.5, 900), "million2": one_decimal(rng, 0.5, 60),
        "pct": rng.randrange(2, 45), "pct2": rng.randrange(2, 30), "price": two_decimals(rng, 4, 180),
        "eps": two_decimals(rng, 0.05, 4), "eps2": two_decimals(rng, 0.05, 4), "fare": two_decimals(rng, 1, 60),
        "year": day.year + rng.randrange(1, 3), "year2": day.year - rng.randrange(2, 12),
        "date": en_date(day, False), "month": EN_MONTHS[day.month - 1], "weekday": EN_WEEKDAYS[day.weekday()],
        "season": rng.choice(EN_SEASONS), "hour": en_hour(rng), "miles": one_decimal(rng, 2, 30),
        "temp": rng.randrange(95, 112), "river": rng.choice(EN_RIVERS), "product": rng.choice(EN_PRODUCTS),
        "project": rng.choice(EN_PROJECTS), "school": city + " " + rng.choice(EN_SCHOOL_KINDS),
        "school2": city2 + " " + rng.choice(EN_SCHOOL_KINDS), "hospital": city + " " + rng.choice(EN_HOSPITAL_KINDS),
    }


def article(rng, lang, sentences=None, home=None):
    """A generated article: (topic, facts, headline, paragraphs); `home`
    sets its city (a local site's stories)."""
    topics = ZH_TOPICS if lang == "zh" else EN_TOPICS
    generic = ZH_GENERIC if lang == "zh" else EN_GENERIC
    facts = zh_facts(rng) if lang == "zh" else en_facts(rng)
    if home is not None:
        facts["city"] = home
    topic = rng.choice(sorted(topics))
    spec = topics[topic]
    # Headlines and leads are listed in matching order.
    which = rng.randrange(len(spec["leads"]))
    headline = fill(rng, spec["headlines"][which], facts)
    lead = fill(rng, spec["leads"][which], facts)
    if sentences is None:
        sentences = rng.randrange(4, 13)
    pool = pick(rng, spec["body"], sentences) + pick(rng, generic, max(0, sentences // 3))
    rng.shuffle(pool)
    body = [fill(rng, sentence, facts) for sentence in pool[:sentences]]
    paragraphs = [[lead]]
    for sentence in body:
        if len(paragraphs[-1]) >= rng.choice([1, 2, 2, 3, 3]):
            paragraphs.append([])
        paragraphs[-1].append(sentence)
    joiner = "" if lang == "zh" else " "
    return topic, facts, headline, [joiner.join(paragraph) for paragraph in paragraphs]


def headline_only(rng, lang, topic=None, facts=None):
    topics = ZH_TOPICS if lang == "zh" else EN_TOPICS
    if facts is None:
        facts = zh_facts(rng) if lang == "zh" else en_facts(rng)
    if topic is None:
        topic = rng.choice(sorted(topics))
    return fill(rng, rng.choice(topics[topic]["headlines"]), facts)


# ---------------------------------------------------------------------------
# Site boilerplate: passages in ordered blocks. A passage keeps the first
# block and, by its length class, some of the following ones in order.
# `{page}`, `{total}`, `{pdate}`, `{views}` change from page to page when a
# group has per-page variation; the other slots are the site's.
# ---------------------------------------------------------------------------

ZH_SITES = [
    ("云江新闻网", "www.yunjiangnews.cn", "云江新闻"), ("东海在线", "www.donghaiol.com", "东海"),
    ("北辰网", "www.beichen.com.cn", "北辰"), ("南风资讯", "news.nanfengzx.com", "南风"),
    ("天下财经网", "www.txcaijing.cn", "天下财经"), ("江城之声", "www.jcvoice.cn", "江城之声"),
    ("山城热线", "www.shanchengrx.com", "山城热线"), ("晨光网", "www.chenguangwang.cn", "晨光"),
    ("青禾新闻", "www.qinghenews.com", "青禾"), ("锦城在线", "www.jinchengol.cn", "锦城"),
    ("星海传媒", "www.xinghaimedia.cn", "星海"), ("明珠网", "www.mingzhuwang.com", "明珠"),
    ("长河新闻", "www.changhenews.cn", "长河"), ("燕山网", "www.yanshanwang.cn", "燕山"),
    ("潮音网", "www.chaoyinwang.com", "潮音"), ("湖畔资讯", "www.hupanzx.cn", "湖畔"),
    ("新野网", "www.xinyewang.cn", "新野"), ("百川新闻", "www.baichuannews.com", "百川"),
    ("金陵热线", "www.jinlingrx.cn", "金陵热线"), ("西岭在线", "www.xilingol.com", "西岭"),
    ("海峡晨报网", "www.haixiacb.cn", "海峡晨报"), ("中原视窗", "www.zhongyuansc.com", "中原视窗"),
    ("岭南头条", "www.lingnantt.cn", "岭南头条"), ("塞北新闻网", "www.saibeinews.cn", "塞北"),
]
EN_SITES = [
    ("The Riverton Ledger", "www.rivertonledger.com", "Ledger"), ("Harbor City Times", "www.harborcitytimes.com", "Harbor Times"),
    ("Northfield Courier", "www.northfieldcourier.com", "Courier"), ("Valley Herald", "www.valleyherald.net", "Valley Herald"),
    ("Lakeside Gazette", "www.lakesidegazette.com", "Gazette"), ("Pinecrest Post", "www.pinecrestpost.com", "Post"),
    ("Metro Daily Wire", "www.metrodailywire.com", "Daily Wire"), ("Coastline News", "www.coastlinenews.net", "Coastline"),
    ("Summit Tribune", "www.summittribune.com", "Tribune"), ("Prairie Dispatch", "www.prairiedispatch.com", "Dispatch"),
    ("Capital Report", "www.capitalreport.net", "Capital Report"), ("Bayview Observer", "www.bayviewobserver.com", "Observer"),
    ("Granite State Sentinel", "www.granitesentinel.com", "Sentinel"), ("Three Rivers Journal", "www.threeriversjournal.com", "Journal"),
    ("County Line Press", "www.countylinepress.com", "County Line"), ("Mesa Evening Star", "www.mesaeveningstar.com", "Evening Star"),
    ("Heartland Register", "www.heartlandregister.com", "Register"), ("Old Harbor Review", "www.oldharborreview.com", "Review"),
    ("Blue Ridge Chronicle", "www.blueridgechron.com", "Chronicle"), ("Westside Bulletin", "www.westsidebulletin.com", "Bulletin"),
]

ZH_BOILERPLATE = {
    "video": [
        ["视频加载中，请稍候……", "视频加载中…", "视频正在加载，请稍候", "正在加载视频，请稍后……"],
        ["[如长时间无法播放|如视频无法正常播放]，请[刷新页面|检查网络后刷新页面]重试。",
         "[若|如]视频[加载失败|无法加载]，请点击[此处|这里]重新加载。"],
        ["[建议|推荐]使用[最新版|新版]浏览器或下载{app}客户端观看[高清|完整]视频。"],
        ["本视频[版权|著作权]归{site}所有，未经授权[禁止|不得]下载、转载或[以其他方式使用|用于商业用途]。"],
        ["{app}客户端：[随时随地看新闻|海量视频免费看]，[在各大应用商店搜索“{app}”|扫描页面下方二维码]即可下载。"],
        ["[视频来源|视频制作]：{site}[融媒体中心|视频部]　[责任编辑|编辑]：{editor}"],
    ],
    "paywall": [
        ["本文为付费内容，订阅后即可阅读全文。", "[本文|此文]仅限{site}会员阅读。", "订阅{site}，[解锁|阅读]全部[精品|独家]内容。"],
        ["已是会员？请[登录|点此登录]。", "[开通会员|成为会员]后[可|即可]无限畅读[全站|全部]付费文章。"],
        ["新用户[首月|首月订阅]仅需{price}元，[连续包月|包年]更优惠。", "[包年|年度]会员[仅需|低至]{price}元。"],
        ["[会员权益|订阅权益]包括：[独家报道|深度调查]、[数据新闻|行业研报]、[无广告阅读|离线下载]等。"],
        ["[如有疑问|如遇问题]，请拨打客服热线{phone}（[工作日|每天]9:00-18:00）。"],
        ["[购买|订阅]即表示您同意《{site}会员服务协议》[及|和]《[隐私政策|个人信息保护政策]》。"],
    ],
    "login": [
        ["登录后查看[全文|更多内容]", "[您尚未登录|请先登录]，登录后[可|即可]阅读全文。", "[本内容|该内容]需要登录后才能查看。"],
        ["[还没有账号？|没有账号？][立即注册|马上注册]", "[使用|可使用]手机号[验证码|快捷]登录，[也可|或]使用第三方账号登录。"],
        ["注册即表示[同意|您已阅读并同意]《{site}用户协议》和《隐私政策》。"],
        ["[登录|注册]遇到问题？[请联系|联系]客服邮箱：{email}"],
    ],
    "original": [
        ["点击[阅读原文|查看原文]", "[点击此处|点击这里]查看原文>>", "原文链接：http://{domain}/{path}", "[更多内容|详细内容]请点击“阅读原文”。"],
        ["[本文|本条信息]转载自{site}，[著作权|版权]归原作者所有。"],
        ["[如需|若需]转载，请[联系|与]原作者[取得授权|联系]。"],
        ["[如涉及|如有]侵权，请[联系|及时联系]我们[删除|处理]：{email}"],
    ],
    "gallery": [
        ["[点击图片|点击大图]浏览下一张", "[高清组图|高清大图]，点击[查看|浏览]", "（图片来源：{site}）", "[左右滑动|滑动]查看更多图片"],
        ["[本组图片|图片]由{site}[摄影部|视觉中心]提供。", "[摄影|摄]：{site}记者 {editor}"],
        ["[未经许可|未经授权]，[不得|禁止]转载[或|、]使用[本组图片|本网图片]。"],
        ["[更多精彩图片|更多图片新闻]请关注{site}[图片频道|图片中心]。"],
    ],
    "disclaimer": [
        ["[声明|免责声明]：本文[内容|信息]来源于网络，[仅供参考|仅供读者参考]。",
         "[本站|本网]转载的文章[仅代表|只代表]作者[个人|本人]观点，与{site}立场无关。"],
        ["{site}对文中陈述、观点判断保持中立，不对所含内容的准确性、可靠性或完整性[作任何|提供任何明示或暗示的]保证。"],
        ["[读者|用户]据此[操作|投资]，风险自担。"],
        ["权利人认为本站内容侵犯其合法权益的，可发送书面通知至{email}，本站核实后将依法处理。"],
        ["联系电话：{phone}　[电子邮箱|邮箱]：{email}"],
    ],
    "removed": [
        ["[抱歉|很抱歉]，[您访问的页面|该内容]不存在或已被删除。", "此内容因违反[相关规定|社区规定]无法查看。", "[该文章|该内容]已被[发布者|作者]删除"],
        ["[页面|本页]将在{sec}秒后[自动|]跳转至首页。"],
        ["[您可以|可以][返回首页|查看其他内容]，或[使用|通过]搜索[查找|寻找]您需要的信息。"],
        ["[如有疑问|如有问题]，请[联系|致电]{site}客服：{phone}"],
    ],
    "app": [
        ["[打开|下载]{app}客户端，[阅读体验更佳|查看更多精彩内容]", "[前往|进入]{app}App[查看|阅读]全文"],
        ["{app}客户端：[权威|及时][资讯|新闻]，[一手掌握|触手可及]。"],
        ["[扫描二维码|扫码]下载，[新用户|首次登录]还[可|能]领取[新人|专属]红包。"],
        ["[已安装|已下载]？[点击打开|直接打开]"],
    ],
    "live": [
        ["[直播|本场直播]即将开始，敬请期待", "直播已结束，[回放|精彩回放]生成中", "[直播|图文直播]正在进行中，[点击|请点击][进入|观看]"],
        ["[关注|订阅]{site}[直播频道|视频号]，[第一时间|及时]获取[开播|直播]提醒。"],
        ["[直播|本直播]内容[版权|著作权]归{site}所有，[未经授权|未经许可][不得|禁止]录制、转播。"],
    ],
}
ZH_PAGE_VARIATION = {
    "video": ["（更新时间：{pdate}）", "播放量：{views}"],
    "paywall": ["（更新时间：{pdate}）"],
    "login": ["阅读量：{views}"],
    "original": ["（发布时间：{pdate}）"],
    "gallery": ["第{page}/{total}张", "（{page}/{total}）", "第{page}页 共{total}页"],
    "disclaimer": ["（发布时间：{pdate}）"],
    "removed": ["（{pdate}）"],
    "app": ["已有{views}人下载"],
    "live": ["[直播时间|开播时间]：{pdate}"],
}

EN_BOILERPLATE = {
    "video": [
        ["Video loading...", "Loading video, please wait.", "Your browser does not support the video tag.", "This video is loading."],
        ["[If the video does not play|If playback does not begin shortly], try [refreshing the page|restarting your device]."],
        ["[For the best experience|To watch in full screen], [download|use] the {app} app [for iOS and Android|on your phone]."],
        ["[Video|All video] [copyright|content] © {year} {site}. [Do not|You may not] [download|copy], [republish|redistribute] or [rebroadcast|reuse] without permission."],
        ["[Autoplay is|Video autoplay is] [turned off|disabled] [in your settings|on this device]. [Tap|Click] play to start."],
        ["[Produced by|Video by] the {site} [video team|multimedia desk]. [Editor|Producer]: {editor}"],
    ],
    "paywall": [
        ["This [article|story] is [available|available only] to subscribers.", "Subscribe to continue reading.",
         "You have reached your [limit|free article limit] for this month."],
        ["Already a subscriber? [Log in|Sign in] [to continue|to keep reading].", "[Subscribe now|Become a subscriber] for unlimited access to {site}."],
        ["[Get|Start with] [your first month|4 weeks] for just ${price}, then ${price2} a month. Cancel anytime."],
        ["[Your subscription|Membership] [includes|comes with] [the e-edition|our daily newsletter], [puzzles|unlimited digital access] and [exclusive reporting|subscriber-only events]."],
        ["[Questions|Need help]? Call [customer service|reader services] at {phone}, [Monday through Friday|weekdays], 8 a.m. to 5 p.m."],
        ["By subscribing, you agree to our Terms of Service and Privacy Policy."],
    ],
    "login": [
        ["[Sign in|Log in] to [read the full article|continue reading].", "Please log in to view this content.", "[This content|This story] is [for registered users|for members] only."],
        ["Don't have an account? [Register|Sign up] for free.", "[Create|Set up] a free account [with your email|in seconds] to [read more|keep reading]."],
        ["By [creating an account|registering], you agree to the {site} [Terms of Use|User Agreement] and [Privacy Policy|Privacy Notice]."],
        ["[Trouble signing in|Problems logging in]? Contact [support|us] at {email}."],
    ],
    "original": [
        ["Click here [for the original article|to read the original story].", "Read the [full|original] story at {site}.",
         "Original article: https://{domain}/{path}", "[Continue reading|Read more] at {domain}"],
        ["This [story|article] [was originally published|first appeared] [by|on] {site} and is [republished|shared] [here|with permission]."],
        ["[All rights|Copyright and all rights] [remain|belong] with the [original publisher|author]."],
        ["[To request removal|For corrections or removal requests], contact {email}."],
    ],
    "gallery": [
        ["Click [to enlarge|on the image to see the next photo].", "Swipe [for more photos|to see the next image].", "(Photo: {site})", "[View|See] the full gallery."],
        ["[Photos|Images] [by|courtesy of] {site} [staff|photographers].", "Photo by {editor}, {site}."],
        ["[Photos may not be|Images may not be] [reproduced|republished] without permission."],
        ["[See more|Find more] photo galleries at {domain}/photos."],
    ],
    "disclaimer": [
        ["The views expressed [in this article|here] are those of the author and do not [necessarily|] reflect the views of {site}.",
         "[Disclaimer|Note]: This content is provided for [general information|informational purposes] only."],
        ["{site} makes no [representations|warranties] as to the accuracy, completeness or timeliness of the information [on this page|provided]."],
        ["[Readers|Users] should [verify|check] [information|facts] independently before [acting on it|making decisions]."],
        ["If you believe [content on this site|this material] infringes your rights, [write to|contact] {email} and we will review [it|the request] promptly."],
        ["{site}, {phone}, {email}"],
    ],
    "removed": [
        ["[Sorry|We're sorry], the page you [requested|are looking for] [could not be found|is no longer available].", "This [article|content] has been removed.",
         "This story is no longer available."],
        ["[You will be|You'll be] redirected to the home page in {sec} seconds."],
        ["[Try|Please try] searching [our site|{domain}] or [return to|go back to] the home page."],
        ["[Questions|Need help]? Contact {site} at {phone}."],
    ],
    "app": [
        ["[Open|Read this] in the {app} app [for a better experience|for the full story].", "Get the {app} app [to keep reading|for more]."],
        ["{app}: [local news|breaking news], [weather|alerts] and [sports|more], [all in one place|wherever you are]."],
        ["[Download|Install] [now|it free] from the App Store or Google Play."],
        ["Already have the app? [Tap here|Open it now]."],
    ],
    "cookie": [
        ["We use cookies [to improve your experience|to personalize content and ads].", "This site uses cookies."],
        ["By [continuing to use|using] this site, you [agree to|consent to] our use of cookies."],
        ["[Learn more|Find out more] [in our|about how we use them in our] [Cookie Policy|Privacy Policy]."],
        ["[You can|To] [change|manage] your [preferences|cookie settings] at any time [under|in] Settings."],
    ],
    "live": [
        ["Live coverage [has ended|is over].", "[Live updates|Live coverage] will begin shortly.", "[Watch|Follow] live: [coverage|the stream] starts soon."],
        ["[Refresh|Reload] this page for the latest updates."],
        ["[Follow|Get alerts from] {site} [for breaking news|on our app] [as it happens|in real time]."],
        ["[Live coverage|This stream] © {year} {site}. [Rebroadcast|Recording] is prohibited."],
    ],
}
EN_PAGE_VARIATION = {
    "video": ["(Updated {pdate})", "{views} views"],
    "paywall": ["(Updated {pdate})"],
    "login": ["Posted {pdate}"],
    "original": ["(Published {pdate})"],
    "gallery": ["Photo {page} of {total}", "({page}/{total})", "Image {page} of {total}"],
    "disclaimer": ["Posted {pdate}"],
    "removed": ["({pdate})"],
    "app": ["{views} downloads"],
    "cookie": ["(Updated {pdate})"],
    "live": ["Last updated {pdate}"],
}

ZH_FOOTER = [
    "【[版权声明|版权说明]】凡[本网|本站]注明“来源：{site}”的[所有|]作品，[著作权|版权]均属于{site}，未经[本网|本站]书面授权，任何单位[及|和]个人不得转载、摘编或以其他方式使用。[经本网授权使用作品的|已获授权的]，应在授权范围内使用，并注明“来源：{site}”。",
    "凡[本网|本站]注明“来源：非{site}”的作品，均转载自其他媒体，转载目的在于[传递|传播]更多信息，并不代表[本网|本站]赞同其观点[和|或]对其真实性负责。",
    "[新闻热线|报料热线]：{phone}　[投稿邮箱|邮箱]：{email}",
    "[关注|扫码关注]{site}[微信公众号|官方微博]，[获取|第一时间获取]更多[本地|权威]资讯。",
    "[违法和不良信息举报电话|举报电话]：{phone2}　举报邮箱：{email2}",
    "{site}（{domain}）版权所有　[互联网新闻信息服务许可证|信息服务许可证]编号：{license}",
    "[下载|安装]{app}客户端，[随时随地|第一时间][看新闻|掌握本地资讯]；[参与|加入]{app}读者群，[和编辑面对面|与编辑直接交流]。",
]
EN_FOOTER = [
    "Copyright © {year} {site}. All rights reserved. This material may not be published, broadcast, rewritten or redistributed without [permission|written permission].",
    "Sign up for the {site} [newsletter|morning briefing] to get [local news|top stories] delivered to your inbox [every morning|each weekday].",
    "Have a [news tip|story idea]? [Email|Contact] our newsroom at {email} or call {phone}.",
    "{site} [welcomes|encourages] [comments|reader feedback]. [Comments are moderated|Please keep comments civil] and may be removed if they violate our [community guidelines|terms of use].",
    "Follow {site} on [social media|Facebook, X and Instagram] for [breaking news|updates] [and more|throughout the day].",
    "[Support|Help support] local journalism: [subscribe|become a member] [today|now] for as little as ${price} a month.",
    "[Corrections|Errors]: {site} is committed to accuracy. [To report an error|If you see an error], [email|write to] {email2}.",
]


def site_slots(rng, lang, site):
    name, domain, app = site
    slots = {
        "site": name, "domain": domain, "app": app, "year": rng.choice([2023, 2024, 2025]),
        "path": "%d/%02d/%s.html" % (rng.choice([2023, 2024]), rng.randrange(1, 13), "".join(rng.choice("abcdef0123456789") for _ in range(8))),
        "sec": rng.choice([3, 5, 10]),
    }
    if lang == "zh":
        slots.update({
            "phone": "0%d-%d" % (rng.randrange(10, 999), rng.randrange(10000000, 89999999)),
            "phone2": "0%d-%d" % (rng.randrange(10, 999), rng.randrange(10000000, 89999999)),
            "email": "%s@%s" % (rng.choice(["news", "tougao", "kefu", "service", "bianji"]), domain.split(".", 1)[1]),
            "email2": "%s@%s" % (rng.choice(["jubao", "weifa", "report"]), domain.split(".", 1)[1]),
            "editor": zh_name(rng), "price": rng.choice([1, 3, 6, 9.9, 12, 19.9, 30, 68, 128, 198]),
            "license": "%d%d" % (rng.randrange(10, 99), rng.randrange(10000000, 99999999)),
        })
    else:
        slots.update({
            "phone": "(%d) %d-%04d" % (rng.randrange(201, 989), rng.randrange(200, 999), rng.randrange(10000)),
            "email": "%s@%s" % (rng.choice(["news", "tips", "newsroom", "help", "support"]), domain.split(".", 1)[1]),
            "email2": "%s@%s" % (rng.choice(["corrections", "editor", "standards"]), domain.split(".", 1)[1]),
            "editor": en_name(rng), "price": rng.choice(["1", "0.99", "4.99", "1.99", "9.99"]),
            "price2": rng.choice(["12.99", "15.99", "9.99", "19.99"]),
        })
    return slots


def boilerplate_passage(rng, lang, kind, length):
    """One passage of a kind: 'line' (its first block), 'para' (two or three
    blocks in one paragraph), 'long' (most blocks, several paragraphs) or
    'full' (a long passage and the site's footer: a page with nothing else).
    Returns a template string (site slots not yet filled)."""
    if length == "full":
        return boilerplate_passage(rng, lang, kind, "long") + "\n" + footer_passage(rng, lang, rng.randrange(2, 5))
    blocks = (ZH_BOILERPLATE if lang == "zh" else EN_BOILERPLATE)[kind]
    chosen = [rng.choice(blocks[0])]
    if length == "para":
        following = sorted(pick(rng, list(range(1, len(blocks))), rng.choice([1, 2])))
    elif length == "long":
        following = list(range(1, len(blocks)))
        if len(following) > 3:
            following = sorted(pick(rng, following, len(following) - rng.choice([0, 1])))
    else:
        following = []
    chosen += [rng.choice(blocks[i]) for i in following]
    chosen = [resolve(rng, block) for block in chosen]
    if length != "long":
        return join_blocks(lang, chosen)
    paragraphs, current = [], []
    for block in chosen:
        current.append(block)
        if len(current) >= rng.choice([1, 2]):
            paragraphs.append(join_blocks(lang, current))
            current = []
    if current:
        paragraphs.append(join_blocks(lang, current))
    return "\n".join(paragraphs)


def join_blocks(lang, blocks):
    """Blocks run on after a sentence end; a block without one (a button's
    label, a link) ends its line."""
    text = ""
    for block in blocks:
        if text:
            if lang == "zh":
                text += "" if text[-1] in "。！？…）》>" else "\n"
            else:
                text += " " if text[-1] in ".!?)" else "\n"
        text += block
    return text


def footer_passage(rng, lang, blocks):
    """A long site footer: 4 to all of the footer blocks, each a paragraph."""
    pool = ZH_FOOTER if lang == "zh" else EN_FOOTER
    chosen = sorted(pick(rng, list(range(len(pool))), blocks))
    return "\n".join(resolve(rng, pool[i]) for i in chosen)


# ---------------------------------------------------------------------------
# Notice forms. A kind draws every slot of one notice (`slots`); a group
# keeps one draw and redraws, for each instance, the slots of one of the
# kind's `vary` sets (a slot name also redraws the slots that start with it).
# Its title and body templates are resolved once per group: one form.
# ---------------------------------------------------------------------------

ZH_PROVINCE_ABBR = "京 沪 津 渝 冀 晋 辽 吉 黑 苏 浙 皖 闽 赣 鲁 豫 鄂 湘 粤 桂 琼 川 贵 云 陕 甘 青".split()
ZH_CIVIL_CAUSES = (
    "民间借贷纠纷 买卖合同纠纷 劳动争议 物业服务合同纠纷 机动车交通事故责任纠纷 房屋租赁合同纠纷 "
    "金融借款合同纠纷 信用卡纠纷 建设工程施工合同纠纷 追索劳动报酬纠纷 服务合同纠纷 装饰装修合同纠纷"
).split()
ZH_VIOLATIONS = [
    ("销售超过保质期的食品", "《中华人民共和国食品安全法》第一百二十四条第一款"),
    ("未按规定明码标价", "《中华人民共和国价格法》第四十二条"),
    ("发布虚假广告", "《中华人民共和国广告法》第五十五条第一款"),
    ("未取得许可从事经营活动", "《无证无照经营查处办法》第十三条"),
    ("生产销售不合格产品", "《中华人民共和国产品质量法》第四十九条"),
    ("未按规定办理年度报告", "《企业信息公示暂行条例》第十八条"),
    ("超标排放大气污染物", "《中华人民共和国大气污染防治法》第九十九条"),
    ("未按规定设置危险废物识别标志", "《中华人民共和国固体废物污染环境防治法》第一百一十二条"),
    ("使用未经检验的特种设备", "《中华人民共和国特种设备安全法》第八十四条"),
]
ZH_WEATHER = ["晴", "多云", "阴", "晴转多云", "多云转阴", "小雨", "中雨", "阵雨", "雷阵雨", "阴转小雨", "小雪", "雨夹雪"]
ZH_WIND = ["北风", "南风", "东风", "西风", "东北风", "西南风", "东南风", "西北风"]
ZH_VEG = ["大白菜", "白萝卜", "土豆", "西红柿", "黄瓜", "青椒", "芹菜", "菠菜", "茄子", "豆角", "胡萝卜", "生菜"]
ZH_MEAT = ["猪肉", "牛肉", "羊肉", "鸡蛋", "白条鸡", "鲫鱼", "草鱼"]
ZH_POSITIONS = [
    "{city}市{bureau}副局长", "{city}市{bureau}局长", "{district}党工委委员", "{district}副区长", "{town}党委书记",
    "{city}市{bureau}办公室主任", "{town}镇长", "{city}市{bureau}四级调研员", "{city}市{bureau}二级调研员",
]
ZH_EDU = ["大学", "研究生", "在职研究生", "大学", "大学", "中央党校大学"]
ZH_ETHNIC = ["汉族", "汉族", "汉族", "回族", "满族", "壮族", "土家族", "苗族"]
ZH_OUTAGE_REASONS = ["线路检修", "设备检修", "配网改造", "线路迁改施工", "变电站设备消缺", "市政道路施工配合"]
ZH_TRAFFIC_EVENTS = ["道路施工", "举办马拉松比赛", "桥梁检测", "管网改造施工", "举办大型群众活动", "地铁施工"]
ZH_LOST_DOCS = ["营业执照副本", "开户许可证", "道路运输经营许可证", "食品经营许可证", "公章一枚", "发票专用章一枚", "出生医学证明", "不动产权证书", "残疾人证"]


def zh_party(rng):
    if rng.random() < 0.45:
        return zh_company(rng)
    return zh_name(rng) if rng.random() < 0.5 else zh_masked_name(rng)


def zh_credit_code(rng):
    letters = "0123456789ABCDEFGHJKLMNPQRTUWXY"
    return "91" + "%06d" % rng.randrange(110000, 659999) + "".join(rng.choice(letters) for _ in range(10))


def zh_court_slots(rng):
    city = rng.choice(ZH_CITIES)
    district = rng.choice(ZH_DISTRICTS)
    day = some_day(rng)
    hearing = day + datetime.timedelta(days=rng.randrange(35, 90))
    return {
        "court": "%s市%s人民法院" % (city, district), "plaintiff": zh_party(rng), "defendant": zh_party(rng),
        "cause": rng.choice(ZH_CIVIL_CAUSES),
        "caseno": "（%d）%s%04d民初%d号" % (day.year, rng.choice(ZH_PROVINCE_ABBR), rng.randrange(101, 9999), rng.randrange(100, 29999)),
        "hear": zh_date(hearing), "hear_time": zh_hour(rng), "room": "第%s法庭" % rng.choice("一二三四五六七八九十"),
        "judge": zh_name(rng), "clerk": zh_name(rng), "phone": "0%d-%d" % (rng.randrange(10, 999), rng.randrange(20000000, 89999999)),
        "pubdate": zh_date(day),
    }


def zh_penalty_slots(rng):
    city = rng.choice(ZH_CITIES)
    day = some_day(rng)
    violation, law = rng.choice(ZH_VIOLATIONS)
    agency = rng.choice(["市场监督管理局", "生态环境局", "应急管理局", "城市管理局"])
    return {
        "agency": "%s市%s" % (city, agency), "party": zh_company(rng, city), "party_code": zh_credit_code(rng),
        "party_rep": zh_name(rng), "violation": violation, "law": law,
        "fine": rng.choice(["2000元", "5000元", "1万元", "2万元", "3万元", "5万元", "10万元", "%d元" % (rng.randrange(2, 90) * 1000)]),
        "abbr": "%s%s罚〔%d〕" % (city[:1], {"市场监督管理局": "市监", "生态环境局": "环", "应急管理局": "应急", "城市管理局": "城管"}[agency], day.year),
        "docno": "%d号" % rng.randrange(1, 900),
        "date": zh_date(day), "address": city + "市" + rng.choice(ZH_DISTRICTS) + zh_road(rng) + "%d号" % rng.randrange(1, 300),
    }


def zh_weather_slots(rng):
    day = some_day(rng)
    tmax = rng.randrange(-5, 38)
    return {
        "city": rng.choice(ZH_CITIES), "date": zh_date(day, False), "hh": rng.choice(["6", "11", "17"]),
        "w1": rng.choice(ZH_WEATHER), "w2": rng.choice(ZH_WEATHER), "w3": rng.choice(ZH_WEATHER),
        "wind": rng.choice(ZH_WIND), "lvl": rng.choice(["1到2", "2到3", "3到4", "4到5", "3级转4"]),
        "tmax": tmax, "tmin": tmax - rng.randrange(4, 13), "tmax2": tmax + rng.randrange(-3, 4),
        "tmin2": tmax - rng.randrange(4, 13), "humidity": rng.randrange(25, 95),
    }


def zh_veg_slots(rng):
    day = some_day(rng)
    city = rng.choice(ZH_CITIES)
    slots = {"date": zh_date(day), "city": city, "market": city + rng.choice(["农产品批发市场", "蔬菜批发市场", "农副产品交易中心"])}
    for i, name in enumerate(pick(rng, ZH_VEG, 6)):
        slots["veg%d" % i] = name
        slots["vprice%d" % i] = "%.2f" % rng.uniform(1.2, 9.5)
    for i, name in enumerate(pick(rng, ZH_MEAT, 3)):
        slots["meat%d" % i] = name
        slots["mprice%d" % i] = "%.2f" % rng.uniform(9, 80)
    slots["pct"] = one_decimal(rng, 0.3, 9)
    return slots


def zh_fuel_slots(rng):
    day = some_day(rng)
    p92 = rng.uniform(6.9, 8.6)
    return {
        "date": zh_date(day), "province": rng.choice(["北京市", "上海市", "广东省", "江苏省", "浙江省", "山东省", "河南省", "四川省", "湖北省", "湖南省", "河北省", "福建省"]),
        "updown": rng.choice(["提高", "降低"]), "ton1": rng.randrange(50, 400), "ton2": rng.randrange(50, 400),
        "p92": "%.2f" % p92, "p95": "%.2f" % (p92 + 0.55), "p0": "%.2f" % (p92 - 0.35),
        "office": rng.choice(["发展和改革委员会", "发展改革委"]),
    }


def zh_stock_slots(rng):
    day = some_day(rng)
    short = rng.choice(ZH_COMPANY_HEADS) + rng.choice(["科技", "股份", "电子", "医药", "新材", "智能", "环境", "控股"])
    return {
        "company": "%s%s股份有限公司" % (rng.choice(ZH_CITIES), short[:2] + rng.choice(ZH_COMPANY_TRADES)),
        "company_short": short, "company_code": rng.choice(["00", "30", "60", "68"]) + "%04d" % rng.randrange(1, 9999),
        "holder": zh_name(rng) if rng.random() < 0.6 else zh_company(rng).replace("有限公司", "投资合伙企业（有限合伙）"),
        "shares": thousands(rng.randrange(2, 90) * 1000000 + rng.randrange(0, 999) * 1000),
        "pct": "%.2f" % rng.uniform(5, 20), "sell": thousands(rng.randrange(1, 30) * 100000),
        "pct2": "%.2f" % rng.uniform(0.5, 3), "no": "%d-%03d" % (day.year, rng.randrange(1, 120)),
        "date": zh_date(day), "days": rng.choice(["两", "三"]),
    }


def zh_appoint_slots(rng):
    day = some_day(rng)
    city = rng.choice(ZH_CITIES)
    place = {"city": city, "bureau": rng.choice(ZH_BUREAUS), "district": rng.choice(ZH_DISTRICTS), "town": zh_town(rng)}
    born = some_day(rng, -365 * 50, 365 * 20)
    return {
        "name": zh_name(rng), "name_sex": rng.choice(["男", "男", "女"]), "name_ethnic": rng.choice(ZH_ETHNIC),
        "name_born": "%d年%d月" % (born.year, born.month), "name_edu": rng.choice(ZH_EDU),
        "pos1": rng.choice(ZH_POSITIONS).format_map(place), "pos2": rng.choice(ZH_POSITIONS).format_map(place),
        "org": "中共%s市委组织部" % city, "from": zh_date(day), "to": zh_date(day + datetime.timedelta(days=rng.choice([5, 7]))),
        "phone": "0%d-%d" % (rng.randrange(10, 999), rng.randrange(20000000, 89999999)), "mail": "%s市%s" % (city, rng.choice(ZH_DISTRICTS) + zh_road(rng) + "%d号" % rng.randrange(1, 200)),
    }


def zh_outage_slots(rng):
    day = some_day(rng)
    city = rng.choice(ZH_CITIES)
    start = rng.choice([7, 8, 9])
    return {
        "grid": "国网%s供电公司" % city if rng.random() < 0.5 else "%s供电局" % city, "reason": rng.choice(ZH_OUTAGE_REASONS),
        "date": zh_date(day), "t1": "%d:00" % start, "t2": "%d:00" % (start + rng.randrange(4, 10)),
        "line": "10kV%s%s线" % (rng.choice(ZH_TOWN_PARTS), rng.choice(ZH_TOWN_PARTS)),
        "area": "%s、%s、%s" % (zh_village(rng), zh_village(rng), zh_road(rng) + "沿线"),
        "hotline": "95598",
    }


def zh_traffic_slots(rng):
    day = some_day(rng)
    city = rng.choice(ZH_CITIES)
    return {
        "police": "%s市公安局交通警察支队" % city, "event": rng.choice(ZH_TRAFFIC_EVENTS),
        "date": zh_date(day), "t1": rng.choice(["6时", "7时", "20时", "22时"]), "t2": rng.choice(["12时", "18时", "次日6时"]),
        "road": zh_road(rng), "road_a": zh_road(rng), "road_b": zh_road(rng),
        "detour": zh_road(rng),
    }


def zh_lost_slots(rng):
    who = zh_company(rng) if rng.random() < 0.5 else zh_name(rng)
    return {
        "who": who, "doc": rng.choice(ZH_LOST_DOCS),
        "docno": rng.choice(["%d" % rng.randrange(10 ** 11, 10 ** 12), zh_credit_code(rng), "%s%d" % (rng.choice("JKLMNOPQRST"), rng.randrange(10 ** 8, 10 ** 9))]),
    }


def zh_tender_slots(rng):
    day = some_day(rng)
    city = rng.choice(ZH_CITIES)
    project = rng.choice(["%s%s提升改造工程", "%s%s雨污分流工程", "%s%s绿化养护项目", "%s%s物业服务采购项目", "%s%s校舍维修工程"]) % (city, rng.choice(ZH_DISTRICTS) + zh_road(rng))
    return {
        "project": project, "project_no": "%s%d%05d" % (rng.choice(["ZB", "CG", "GC"]), day.year, rng.randrange(1, 99999)),
        "buyer": "%s市%s" % (city, rng.choice(ZH_BUREAUS)), "agent": zh_company(rng).replace("有限公司", "招标代理有限公司"),
        "c1": zh_company(rng), "c2": zh_company(rng), "c3": zh_company(rng),
        "p1": "%.2f" % rng.uniform(80, 3000), "p2": "%.2f" % rng.uniform(80, 3000), "p3": "%.2f" % rng.uniform(80, 3000),
        "from": zh_date(day), "to": zh_date(day + datetime.timedelta(days=3)), "phone": "0%d-%d" % (rng.randrange(10, 999), rng.randrange(20000000, 89999999)),
    }


ZH_NOTICE_KINDS = [
    {
        "name": "court", "slots": zh_court_slots,
        "vary": [["plaintiff", "defendant", "caseno"], ["defendant", "caseno"], ["defendant", "caseno", "hear"], ["defendant", "cause", "caseno", "room"]],
        "titles": ["开庭公告", "[{court}|]开庭公告", "{plaintiff}与{defendant}{cause}一案开庭公告", "{court}公告"],
        "short": ["[本院|{court}]定于{hear}{hear_time}在本院{room}公开开庭审理原告{plaintiff}诉被告{defendant}{cause}一案[。特此公告。|。]",
                  "【开庭公告】原告{plaintiff}诉被告{defendant}{cause}一案，[定于|将于]{hear}{hear_time}在{court}{room}开庭审理。"],
        "long": ["{court}\n公告\n{caseno}\n{defendant}：\n本院受理原告{plaintiff}诉[你|你方]{cause}一案，因[你|你方]下落不明，依照《中华人民共和国民事诉讼法》的规定，向[你|你方]公告送达起诉状副本、应诉通知书、举证通知书及开庭传票。自公告之日起经过三十日，即视为送达。提出答辩状的期限和举证的期限均为公告期满后十五日内。\n本案定于{hear}{hear_time}在本院{room}开庭审理，逾期不到庭，本院将依法缺席判决。\n审判员：{judge}　书记员：{clerk}　联系电话：{phone}\n特此公告。\n{court}\n{pubdate}",
                 "开庭公告\n[案号|案件编号]：{caseno}\n案由：{cause}\n原告：{plaintiff}\n被告：{defendant}\n开庭时间：{hear}{hear_time}\n开庭地点：{court}{room}\n承办法官：{judge}\n书记员：{clerk}\n[本案依法公开审理，欢迎旁听。旁听人员须持有效身份证件，提前三十分钟到达法庭，经安全检查后入场。旁听时不得录音、录像和摄影，不得随意走动或进入审判区，不得发言、提问，不得鼓掌、喧哗。|本案依法公开审理。旁听人员请持本人有效身份证件，于开庭前三十分钟到本院诉讼服务中心办理旁听手续，并自觉遵守法庭纪律。]\n{court}\n{pubdate}"],
    },
    {
        "name": "penalty", "slots": zh_penalty_slots,
        "vary": [["party", "docno"], ["party", "fine", "docno"], ["party", "address", "docno"]],
        "titles": ["行政处罚决定书[公示|信息公示]", "{agency}行政处罚信息公示", "关于{party}的行政处罚决定"],
        "short": ["{party}因{violation}，被{agency}[处以|依法处以]罚款{fine}。",
                  "【处罚公示】{party}{violation}，违反{law}，{agency}[决定|依法]给予警告并处罚款{fine}。"],
        "long": ["行政处罚决定书文号：{abbr}{docno}\n当事人名称：{party}\n统一社会信用代码：{party_code}\n法定代表人：{party_rep}\n住所：{address}\n违法行为类型：{violation}\n违法事实：经查，当事人在[经营|生产经营]过程中存在{violation}的行为，[执法人员|我局执法人员]依法进行了现场检查并制作了笔录，当事人对上述事实无异议。\n处罚依据：{law}\n处罚[结果|内容]：[警告，并处罚款{fine}|罚款{fine}]\n处罚机关：{agency}\n处罚决定日期：{date}\n[当事人如不服本处罚决定，可在收到本决定书之日起六十日内依法申请行政复议，或者在六个月内依法提起行政诉讼。|]",
                 "{agency}\n行政处罚决定书\n{abbr}{docno}\n当事人：{party}\n[统一社会信用代码|信用代码]：{party_code}\n当事人{violation}一案，[经|已由]本机关依法调查终结。本机关认为，当事人的上述行为违反了{law}的规定。[鉴于当事人能够积极配合调查并主动改正违法行为，|]依据{law}，本机关决定对当事人[作出如下行政处罚：罚款{fine}|处以罚款{fine}]。\n当事人应当自收到本决定书之日起十五日内，将罚款缴至指定银行。逾期不缴纳的，每日按罚款数额的百分之三加处罚款。\n{agency}\n{date}"],
    },
    {
        "name": "weather", "slots": zh_weather_slots,
        "vary": [["city", "tmax", "tmin"], ["date", "w1", "w2", "tmax", "tmin"], ["date", "tmax", "tmin", "wind", "lvl"]],
        "titles": ["{city}天气预报", "{date}{city}天气", "天气预报", "{city}气象台[最新|]天气预报"],
        "short": ["{city}气象台{date}{hh}时发布：今天白天{w1}，{wind}{lvl}级，最高气温{tmax}℃；今天夜间{w2}，最低气温{tmin}℃。",
                  "【{city}天气】{date}：{w1}，{tmin}～{tmax}℃，{wind}{lvl}级。"],
        "long": ["{city}气象台{date}{hh}时发布天气预报：\n今天白天：{w1}，{wind}{lvl}级，最高气温{tmax}℃。\n今天夜间：{w2}，[风力不大|{wind}{lvl}级]，最低气温{tmin}℃。\n明天：{w3}，{tmin2}～{tmax2}℃。\n相对湿度：{humidity}%。\n[温馨提示：近期早晚温差较大，请注意适时增减衣物，谨防感冒。|温馨提示：出行请关注天气变化，合理安排出行时间。]\n[以上预报由{city}市气象台发布，如有变化请以最新预报为准。|]"],
    },
    {
        "name": "vegprice", "slots": zh_veg_slots,
        "vary": [["vprice0", "vprice1", "vprice2", "mprice0"], ["date", "vprice0", "vprice3"], ["city", "market"], ["mprice0", "mprice1", "mprice2", "pct"]],
        "titles": ["{market}[今日|]价格行情", "{date}主要农产品批发价格", "[今日|每日]菜价"],
        "short": ["{date}，{market}{veg0}每公斤{vprice0}元，{veg1}{vprice1}元，{veg2}{vprice2}元，{meat0}{mprice0}元。"],
        "long": ["{date}{market}主要农产品批发价格（单位：元/公斤）\n蔬菜类：{veg0}{vprice0}，{veg1}{vprice1}，{veg2}{vprice2}，{veg3}{vprice3}，{veg4}{vprice4}，{veg5}{vprice5}。\n肉蛋类：{meat0}{mprice0}，{meat1}{mprice1}，{meat2}{mprice2}。\n[今日|当日]蔬菜批发均价环比[上涨|下降]{pct}%，[上市量基本平稳|上市量略有增加]。\n[数据来源：{market}信息中心。以上价格为批发均价，仅供参考。|以上价格为市场批发均价，仅供参考，不作为交易依据。]"],
    },
    {
        "name": "fuel", "slots": zh_fuel_slots,
        "vary": [["province", "p92", "p95", "p0"], ["date", "ton1", "ton2", "p92", "p95", "p0"], ["updown", "ton1", "ton2", "p92", "p95", "p0"]],
        "titles": ["{province}成品油价格调整[公告|通知]", "[油价|成品油价格]调整", "{province}汽柴油价格{updown}"],
        "short": ["自{date}24时起，{province}汽、柴油价格每吨分别{updown}{ton1}元和{ton2}元，92号汽油每升{p92}元。"],
        "long": ["根据国家发展改革委关于调整成品油价格的[通知|安排]，经[研究|测算]，{province}自{date}24时起调整汽、柴油价格：\n一、汽、柴油[最高零售价格|零售限价]每吨分别{updown}{ton1}元和{ton2}元。\n二、调整后，92号汽油最高零售价格为每升{p92}元，95号汽油每升{p95}元，0号柴油每升{p0}元。\n三、各地要加强市场监测，加大价格监督检查力度，依法查处不执行价格政策的行为，维护正常市场秩序。\n{province}{office}\n{date}"],
    },
    {
        "name": "stock", "slots": zh_stock_slots,
        "vary": [["company", "holder", "shares", "pct", "sell", "no"], ["holder", "shares", "pct", "sell", "no"]],
        "titles": ["{company_short}：关于持股5%以上股东减持股份计划的预披露公告", "{company_short}关于股东减持计划的公告", "关于持股5%以上股东减持股份计划的预披露公告"],
        "short": ["{company_short}（{company_code}）公告，股东{holder}计划减持不超过{sell}股，占公司总股本{pct2}%。",
                  "{company_short}：持股5%以上股东{holder}拟减持不超过{pct2}%[公司|]股份。"],
        "long": ["证券代码：{company_code}　证券简称：{company_short}　公告编号：{no}\n{company}关于持股5%以上股东减持股份计划的预披露公告\n本公司及董事会全体成员保证信息披露内容的真实、准确和完整，没有虚假记载、误导性陈述或重大遗漏。\n特别提示：持有本公司股份{shares}股（占本公司总股本比例{pct}%）的股东{holder}，计划自本公告披露之日起十五个交易日后的三个月内，以集中竞价[或大宗交易|]方式减持本公司股份不超过{sell}股（占本公司总股本比例{pct2}%）。\n一、股东的基本情况\n截至本公告日，{holder}持有公司股份{shares}股，占公司总股本的{pct}%。\n二、本次减持计划的主要内容\n减持原因：自身资金需求。股份来源：公司首次公开发行前持有的股份。减持价格根据减持时的市场价格确定。\n三、相关风险提示\n本次减持计划的实施存在不确定性，公司将持续关注减持计划的实施情况，并按照相关规定及时履行信息披露义务。\n特此公告。\n{company}董事会\n{date}"],
    },
    {
        "name": "abnormal", "slots": zh_stock_slots,
        "vary": [["company", "no"], ["company", "no", "date"]],
        "titles": ["{company_short}：股票交易异常波动公告", "{company}股票交易异常波动公告", "股票交易异常波动公告"],
        "short": ["{company_short}（{company_code}）公告，公司股票连续{days}个交易日收盘价格涨幅偏离值累计超过20%，属于股票交易异常波动情形。"],
        "long": ["证券代码：{company_code}　证券简称：{company_short}　公告编号：{no}\n{company}股票交易异常波动公告\n本公司及董事会全体成员保证公告内容真实、准确和完整，没有虚假记载、误导性陈述或者重大遗漏。\n一、股票交易异常波动的情况\n公司股票于{date}前连续{days}个交易日收盘价格涨幅偏离值累计超过20%，根据证券交易所的有关规定，属于股票交易异常波动的情形。\n二、公司关注并核实的情况\n经核查，公司前期披露的信息不存在需要更正、补充之处；近期公共传媒未报道可能或已经对公司股票交易价格产生较大影响的未公开重大信息；公司目前经营情况正常，内外部经营环境未发生重大变化；公司、控股股东和实际控制人不存在关于公司的应披露而未披露的重大事项。\n三、风险提示\n公司郑重提醒广大投资者，有关信息以公司在指定信息披露媒体刊登的公告为准，请广大投资者理性投资，注意风险。\n特此公告。\n{company}董事会\n{date}"],
    },
    {
        "name": "appoint", "slots": zh_appoint_slots,
        "vary": [["name", "pos1", "pos2"], ["name", "pos1"], ["name", "pos2"]],
        "titles": ["干部任前公示", "[{org}|]干部任前公示公告", "关于{name}同志的任前公示"],
        "short": ["{name}，{name_sex}，{name_ethnic}，{name_born}生，{name_edu}学历，中共党员，现任{pos1}，拟任{pos2}。"],
        "long": ["[根据《党政领导干部选拔任用工作条例》等有关规定|为进一步扩大干部工作中的民主，加强对干部选拔任用工作的监督]，现将拟任职干部[人选|]予以公示：\n{name}，{name_sex}，{name_ethnic}，{name_born}出生，{name_edu}学历，中共党员，现任{pos1}，拟任{pos2}。\n公示时间：{from}至{to}。\n公示期间，[个人和单位|干部群众]可[通过|采取]来信、来电、来访等方式，向{org}反映公示对象在政治品质、道德品行、工作作风、廉洁自律等方面的情况和问题。反映问题应实事求是，以真实姓名反映的优先受理。\n[受理电话|举报电话]：{phone}\n来信地址：{mail}\n{org}\n{from}"],
    },
    {
        "name": "outage", "slots": zh_outage_slots,
        "vary": [["date", "line", "area"], ["line", "area"], ["date", "t1", "t2", "reason"]],
        "titles": ["停电通知", "[计划|]停电[公告|通知]", "{grid}停电通知"],
        "short": ["因{reason}，{grid}定于{date}{t1}至{t2}对{line}停电，{area}停止供电，请用户提前做好准备。"],
        "long": ["停电通知\n尊敬的电力客户：\n因{reason}需要，{grid}定于{date}{t1}至{t2}对{line}[线路|]停电[检修|施工]。届时以下区域将停止供电：{area}。\n[如遇雨天或其他特殊情况，停电时间将顺延或另行通知。|工作结束后将立即恢复送电，不再另行通知。]请相关用户提前做好生产、生活安排，停电期间请勿攀登电杆、靠近电力设施，视同线路带电。\n由此给您带来的不便，敬请谅解！\n[服务热线|供电服务热线]：{hotline}\n{grid}\n{date}"],
    },
    {
        "name": "traffic", "slots": zh_traffic_slots,
        "vary": [["road", "road_a", "road_b", "detour"], ["date"], ["date", "road_a", "road_b"], ["event", "road", "road_a", "road_b"]],
        "titles": ["关于{road}实行临时交通管制的通告", "交通管制通告", "{police}[通告|交通管制公告]"],
        "short": ["因{event}需要，{date}{t1}至{t2}，{road}（{road_a}至{road_b}段）实行临时交通管制，请车辆绕行{detour}。"],
        "long": ["{police}\n通告\n因{event}需要，根据《中华人民共和国道路交通安全法》有关规定，决定对以下道路实行临时交通管制：\n一、管制时间：{date}{t1}至{t2}。\n二、管制路段：{road}（{road_a}至{road_b}段）。\n三、管制措施：管制期间，禁止除执行任务的警车、消防车、救护车、工程抢险车以外的机动车通行，过往车辆请提前绕行{detour}等道路。\n四、[请广大驾驶员和行人遵守交通管制规定，服从现场交通民警和工作人员的指挥。|违反本通告规定的，由公安机关交通管理部门依法处理。]\n特此通告。\n{police}\n{date}"],
    },
    {
        "name": "lost", "slots": zh_lost_slots,
        "vary": [["who", "docno"], ["who", "doc", "docno"]],
        "titles": ["遗失声明", "[遗失|作废]声明", ""],
        "short": ["{who}遗失{doc}，[证号|编号]：{docno}，声明作废。", "[遗失声明：|]{who}不慎遗失{doc}（{docno}），特此声明作废。"],
        "long": ["遗失声明\n{who}不慎遗失{doc}，[证照编号|编号]：{docno}。[自本声明刊登之日起，|]该{doc}[即行作废|声明作废]，[任何单位和个人持有该证件办理的一切业务，均与本单位（本人）无关|由此产生的一切法律责任由持有人承担]。\n特此声明。"],
    },
    {
        "name": "tender", "slots": zh_tender_slots,
        "vary": [["project", "project_no", "c1", "c2", "c3", "p1", "p2", "p3"], ["project", "project_no", "p1", "p2", "p3"]],
        "titles": ["{project}中标候选人公示", "中标候选人公示", "{project}评标结果公示"],
        "short": ["{project}（{project_no}）中标候选人公示：第一中标候选人{c1}，投标报价{p1}万元。"],
        "long": ["{project}中标候选人公示\n项目编号：{project_no}\n招标人：{buyer}\n招标代理机构：{agent}\n{project}评标工作已经结束，根据评标委员会的评审结果，现将中标候选人公示如下：\n第一中标候选人：{c1}，投标报价：{p1}万元；\n第二中标候选人：{c2}，投标报价：{p2}万元；\n第三中标候选人：{c3}，投标报价：{p3}万元。\n公示期：{from}至{to}。投标人或其他利害关系人对评标结果有异议的，应当在公示期内以书面形式向招标人提出。\n联系电话：{phone}"],
    },
]

EN_CASE_KINDS = [
    "motion for default judgment", "complaint for foreclosure", "petition for dissolution of marriage",
    "complaint for breach of contract", "petition for change of name", "complaint to quiet title",
    "motion for summary judgment", "petition for guardianship",
]
EN_VIOLATIONS = [
    ("failing to report a hazardous waste spill", "Environmental Protection"),
    ("exceeding permitted wastewater discharge limits", "Environmental Protection"),
    ("failing to maintain required safety guardrails", "Labor and Industry"),
    ("selling alcohol to a minor", "Alcoholic Beverage Control"),
    ("operating without a valid license", "Licensing and Regulation"),
    ("misleading advertising of service fees", "Consumer Protection"),
    ("late filing of required emissions reports", "Environmental Protection"),
    ("failing to post required price information", "Consumer Protection"),
    ("allowing unqualified workers to operate a crane", "Labor and Industry"),
]
EN_CONDITIONS = ["Sunny", "Mostly sunny", "Partly cloudy", "Mostly cloudy", "Cloudy", "Scattered showers",
                 "Rain likely", "Thunderstorms possible", "Light snow", "Patchy fog, then sunny", "Breezy and clear"]
EN_DIRECTIONS = ["north", "south", "east", "west", "northwest", "southwest", "northeast", "southeast"]
EN_PRODUCTS_RECALL = [
    ("space heaters", "the power cord can overheat, posing a fire hazard"),
    ("children's pajamas", "they fail to meet federal flammability standards"),
    ("pressure cookers", "the lid can open while the contents are under pressure, posing a burn hazard"),
    ("bicycle helmets", "they may not protect the head in a crash"),
    ("frozen chicken strips", "they may be contaminated with plastic pieces"),
    ("portable chargers", "the battery can overheat and ignite"),
    ("high chairs", "the seat can detach from the frame, posing a fall hazard"),
    ("ceiling fans", "the blades can detach while in use"),
    ("granola bars", "they may contain undeclared peanuts"),
]
EN_BOARDS = ["Planning Commission", "Zoning Board of Appeals", "City Council", "Board of County Commissioners", "Historic Preservation Commission"]
EN_REQUESTS = ["special use permit", "variance from the side-yard setback requirement", "rezoning from R-1 to R-3",
               "conditional use permit", "site plan approval", "certificate of appropriateness"]


def en_party(rng):
    if rng.random() < 0.35:
        return en_company(rng)
    return en_name(rng)


def en_court_slots(rng):
    day = some_day(rng)
    hearing = day + datetime.timedelta(days=rng.randrange(21, 75))
    county = rng.choice(EN_COUNTIES)
    return {
        "court": "Circuit Court of %s County, %s" % (county, rng.choice(EN_STATES)),
        "plaintiff": en_party(rng), "defendant": en_party(rng), "kind": rng.choice(EN_CASE_KINDS),
        "caseno": "%d-%s-%05d" % (day.year % 100 if rng.random() < 0.5 else day.year, rng.choice(["CV", "DR", "CA", "PR"]), rng.randrange(1, 99999)),
        "hear": en_date(hearing), "hear_weekday": EN_WEEKDAYS[hearing.weekday()], "hear_time": en_hour(rng),
        "room": rng.randrange(1, 12), "courthouse": "%s County Courthouse" % county, "address": en_address(rng),
        "clerk": en_name(rng), "pubdate": en_date(day),
    }


def en_fine_slots(rng):
    day = some_day(rng)
    violation, department = rng.choice(EN_VIOLATIONS)
    return {
        "state": rng.choice(EN_STATES), "department": department, "company": en_company(rng),
        "company_city": rng.choice(EN_CITIES), "violation": violation,
        "amount": thousands(rng.choice([5000, 7500, 10000, 12500, 15000, 25000, 50000, rng.randrange(2, 90) * 1000])),
        "date": en_date(day), "order": "%s-%d-%03d" % (rng.choice(["CO", "NOV", "AO"]), day.year, rng.randrange(1, 999)),
        "days": rng.choice([30, 45, 60]),
    }


def en_weather_slots(rng):
    day = some_day(rng)
    high = rng.randrange(20, 100)
    return {
        "city": rng.choice(EN_CITIES), "weekday": EN_WEEKDAYS[day.weekday()], "date": en_date(day, False),
        "cond": rng.choice(EN_CONDITIONS), "cond2": rng.choice(EN_CONDITIONS), "high": high, "low": high - rng.randrange(8, 25),
        "high2": high + rng.randrange(-5, 6), "low2": high - rng.randrange(8, 25), "dir": rng.choice(EN_DIRECTIONS),
        "wind1": rng.randrange(3, 12), "wind2": rng.randrange(12, 25), "rain": rng.randrange(0, 9) * 10,
    }


def en_gas_slots(rng):
    day = some_day(rng)
    return {
        "state": rng.choice(EN_STATES), "date": en_date(day, False), "price": "%.2f" % rng.uniform(2.8, 4.9),
        "updown": rng.choice(["up", "down"]), "cents": rng.randrange(1, 15), "diesel": "%.2f" % rng.uniform(3.4, 5.6),
        "year_ago": "%.2f" % rng.uniform(2.8, 4.9), "cheap": rng.choice(EN_CITIES), "cheap_price": "%.2f" % rng.uniform(2.6, 3.6),
        "dear": rng.choice(EN_CITIES), "dear_price": "%.2f" % rng.uniform(3.6, 5.2),
    }


def en_dividend_slots(rng):
    day = some_day(rng)
    name = en_company(rng)
    ticker = "".join(word[0] for word in name.split()[:2]).upper() + rng.choice("ABCDEFGHKLMNPRSTX")
    return {
        "company": name, "company_ticker": ticker, "exchange": rng.choice(["NYSE", "Nasdaq"]),
        "amount": "%.2f" % rng.uniform(0.05, 1.6), "pay": en_date(day + datetime.timedelta(days=rng.randrange(20, 40))),
        "record": en_date(day + datetime.timedelta(days=rng.randrange(5, 19))), "date": en_date(day),
        "city": rng.choice(EN_CITIES), "state": rng.choice(EN_STATES), "contact": en_name(rng),
        "phone": "(%d) %d-%04d" % (rng.randrange(201, 989), rng.randrange(200, 999), rng.randrange(10000)),
    }


def en_public_hearing_slots(rng):
    day = some_day(rng)
    city = rng.choice(EN_CITIES)
    return {
        "city": city, "board": rng.choice(EN_BOARDS), "date": en_date(day), "time": en_hour(rng),
        "place": "Council Chambers, %s City Hall, %s" % (city, en_address(rng)),
        "applicant": en_party(rng), "request": rng.choice(EN_REQUESTS), "site": en_address(rng),
        "parcel": "%02d-%02d-%03d-%03d" % (rng.randrange(1, 99), rng.randrange(1, 40), rng.randrange(1, 999), rng.randrange(1, 999)),
        "clerk": en_name(rng),
    }


def en_closure_slots(rng):
    day = some_day(rng)
    return {
        "road": en_street(rng), "road_a": en_street(rng), "road_b": en_street(rng), "city": rng.choice(EN_CITIES),
        "from": en_date(day, False), "to": en_date(day + datetime.timedelta(days=rng.randrange(1, 30)), False),
        "reason": rng.choice(["water main replacement", "bridge repairs", "repaving", "sewer work", "a utility project", "culvert replacement"]),
        "detour": en_street(rng), "dept": rng.choice(["Public Works Department", "Street Department", "Engineering Division"]),
        "hours": rng.choice(["7 a.m. to 5 p.m.", "around the clock", "8 p.m. to 6 a.m.", "9 a.m. to 3 p.m."]),
    }


def en_recall_slots(rng):
    day = some_day(rng)
    product, hazard = rng.choice(EN_PRODUCTS_RECALL)
    return {
        "company": en_company(rng), "units": thousands(rng.randrange(2, 400) * 100), "product": product, "hazard": hazard,
        "retailer": rng.choice(["hardware stores", "department stores", "grocery stores", "online retailers", "discount stores"]),
        "from": EN_MONTHS[day.month - 1] + " %d" % day.year, "to": EN_MONTHS[(day.month + 5) % 12] + " %d" % (day.year + 1),
        "phone": "800-%d-%04d" % (rng.randrange(200, 999), rng.randrange(10000)), "incidents": rng.randrange(2, 40),
        "date": en_date(day), "price": rng.choice(["20", "35", "50", "80", "120"]),
    }


def en_probate_slots(rng):
    day = some_day(rng)
    county = rng.choice(EN_COUNTIES)
    return {
        "decedent": en_name(rng), "rep": en_name(rng), "attorney": en_name(rng), "county": county,
        "state": rng.choice(EN_STATES), "caseno": "%d-PR-%05d" % (day.year, rng.randrange(1, 99999)),
        "date": en_date(day), "address": "%s, %s" % (en_address(rng), rng.choice(EN_CITIES)),
        "died": en_date(day - datetime.timedelta(days=rng.randrange(30, 200))),
    }


EN_NOTICE_KINDS = [
    {
        "name": "court", "slots": en_court_slots,
        "vary": [["plaintiff", "defendant", "caseno"], ["defendant", "caseno"], ["hear", "defendant", "caseno"]],
        "titles": ["Notice of Hearing", "NOTICE OF HEARING", "{plaintiff} v. {defendant}", "Legal Notice"],
        "short": ["{court}: {plaintiff} v. {defendant}, Case No. {caseno}, [set for hearing|hearing set for] {hear} at {hear_time}, Courtroom {room}.",
                  "NOTICE: A hearing in {plaintiff} v. {defendant} ({caseno}) will be held {hear} at {hear_time} in Courtroom {room}."],
        "long": ["IN THE {court}\n{plaintiff}, Plaintiff,\nv.\n{defendant}, Defendant.\nCase No. {caseno}\nNOTICE OF HEARING\nTO: {defendant}\nYou are hereby notified that a hearing on the {kind} [filed in this action|filed by the Plaintiff] will be held on {hear_weekday}, {hear}, at {hear_time}, in Courtroom {room} of the {courthouse}, {address}. If you fail to appear, the Court may enter [judgment|an order] against you [by default|for the relief demanded in the complaint]. [Persons with a disability who need an accommodation to participate in this proceeding should contact the court administrator at least seven days before the hearing.|]\nDated: {pubdate}\n{clerk}, Clerk of Court"],
    },
    {
        "name": "fine", "slots": en_fine_slots,
        "vary": [["company", "company_city", "order"], ["company", "order"], ["company", "amount", "order"], ["company", "date", "order"]],
        "titles": ["[State|{state}] fines {company}", "Notice of civil penalty", "Enforcement action: {company}"],
        "short": ["The {state} Department of {department} fined {company} ${amount} for {violation} at its {company_city} [site|facility].",
                  "{company} was fined ${amount} by the {state} Department of {department} for {violation}, according to an order dated {date}."],
        "long": ["The {state} Department of {department} has [assessed|issued] a civil penalty of ${amount} against {company} for {violation} at its {company_city} [facility|site], according to [a consent order|an order] dated {date}.\n[Inspectors|State inspectors] found the violation during a [routine|scheduled] inspection, the department said. The company [has agreed to pay the penalty|did not admit wrongdoing but agreed to pay] and to [correct the problem|take corrective action] within {days} days.\nThe order, No. {order}, is available for public review at the department's regional office. [Comments on the order may be submitted in writing within {days} days of this notice.|]"],
    },
    {
        "name": "weather", "slots": en_weather_slots,
        "vary": [["city", "high", "low"], ["weekday", "date", "cond", "high", "low"], ["weekday", "date", "high", "low", "wind1", "wind2"]],
        "titles": ["{city} forecast", "Weather for {weekday}, {date}", "Local forecast", "{city} weather"],
        "short": ["{city} forecast for {weekday}: {cond}, high {high}, low {low}. Winds {dir} {wind1} to {wind2} mph.",
                  "{cond} in {city} {weekday} with a high near {high}; tonight's low around {low}."],
        "long": ["{city} forecast for {weekday}, {date}\nToday: {cond}, with a high near {high}. {dir} wind {wind1} to {wind2} mph.\nTonight: {cond2}, with a low around {low}. Chance of precipitation {rain} percent.\nTomorrow: {cond2}, with a high near {high2} and a low around {low2}.\n[Forecast provided by the National Weather Service. Conditions may change; check for updates before traveling.|Forecasts are updated every six hours. Check back for the latest conditions.]"],
    },
    {
        "name": "gas", "slots": en_gas_slots,
        "vary": [["state", "price", "diesel", "year_ago"], ["date", "price", "cents", "updown"], ["cheap", "cheap_price", "dear", "dear_price"]],
        "titles": ["Gas prices {updown} in {state}", "[Weekly gas price update|{state} gas prices]", "Gas prices"],
        "short": ["The average price of regular gasoline in {state} was ${price} a gallon on {date}, {updown} {cents} cents from a week ago."],
        "long": ["The average price of a gallon of regular gasoline in {state} was ${price} on {date}, {updown} {cents} cents from a week earlier, according to the [weekly survey of|survey of more than 1,000] gas stations.\nA year ago, drivers in the state paid an average of ${year_ago}. Diesel averaged ${diesel} a gallon.\nThe cheapest gas in the state was in {cheap} at ${cheap_price} a gallon; the most expensive was in {dear} at ${dear_price}.\n[Analysts said prices could shift in the coming weeks as refineries complete seasonal maintenance.|]"],
    },
    {
        "name": "dividend", "slots": en_dividend_slots,
        "vary": [["company", "amount"], ["company", "pay", "record"], ["amount", "pay", "record", "date"]],
        "titles": ["{company} declares quarterly dividend", "{company} Announces Quarterly Cash Dividend", "Dividend announcement"],
        "short": ["{company} ({exchange}: {company_ticker}) declared a quarterly dividend of ${amount} per share, payable {pay} to holders of record {record}."],
        "long": ["{city}, {state}, {date} -- {company} ({exchange}: {company_ticker}) today announced that its Board of Directors declared a quarterly cash dividend of ${amount} per share of common stock. The dividend is payable on {pay} to shareholders of record at the close of business on {record}.\n[The company has paid a dividend every quarter since its initial public offering.|]\nAbout {company}\n{company} is a [leading|diversified] provider of [products and services|solutions] to [customers|businesses] in North America and [Europe|abroad].\nForward-looking statements in this release are subject to risks and uncertainties that could cause actual results to differ materially.\nContact: {contact}, Investor Relations, {phone}"],
    },
    {
        "name": "hearing", "slots": en_public_hearing_slots,
        "vary": [["applicant", "site", "parcel"], ["applicant", "request", "site", "parcel"], ["site", "parcel"]],
        "titles": ["Notice of Public Hearing", "Public hearing notice", "{city} {board} hearing"],
        "short": ["The {city} {board} will hold a public hearing on {date} at {time} on a request by {applicant} for a {request} at {site}."],
        "long": ["NOTICE OF PUBLIC HEARING\nNotice is hereby given that the {city} {board} will hold a public hearing on {date} at {time} in the {place}, to consider the application of {applicant} for a {request} for the property located at {site} (Parcel No. {parcel}).\nAll interested persons are invited to attend and be heard. Written comments may be submitted to the City Clerk before the hearing. The application is available for inspection at City Hall during regular business hours.\n[Persons needing special accommodations should contact the City Clerk at least 48 hours before the meeting.|]\n{clerk}, City Clerk"],
    },
    {
        "name": "closure", "slots": en_closure_slots,
        "vary": [["road", "road_a", "road_b", "detour"], ["from", "to"], ["road_a", "road_b"], ["road", "reason", "detour"]],
        "titles": ["{road} to close for {reason}", "Road closure", "{city} road closures"],
        "short": ["{road} between {road_a} and {road_b} will be closed {from} through {to} for {reason}. Detour: {detour}."],
        "long": ["{road} between {road_a} and {road_b} will be closed to through traffic from {from} through {to} for {reason}, the {city} {dept} said.\nWork will take place {hours}. Local traffic and emergency vehicles will have access. Drivers should use {detour} as a detour, and detour signs will be posted.\nThe schedule may change because of weather. [For updates, call the {dept} or check the city's website.|]"],
    },
    {
        "name": "recall", "slots": en_recall_slots,
        "vary": [["company", "product", "hazard", "units", "incidents"], ["company", "units", "incidents", "price"], ["units", "from", "to", "incidents"]],
        "titles": ["{company} recalls {product}", "Recall: {product}", "[Product|Safety] recall notice"],
        "short": ["{company} is recalling about {units} {product} because {hazard}. Consumers should stop using them and call {phone}."],
        "long": ["{company} is recalling about {units} {product} sold at {retailer} nationwide from {from} through {to} for about ${price}, because {hazard}.\nThe company has received {incidents} reports of [incidents|problems], [including|and] [minor injuries|no injuries].\nConsumers should immediately stop using the recalled {product} and contact {company} for a full refund [or a free replacement|]. Call toll-free at {phone} from 8 a.m. to 5 p.m. ET Monday through Friday, or visit the company's website and click on Recalls.\nThis recall was conducted voluntarily [in cooperation with federal regulators|].\nRecall date: {date}"],
    },
    {
        "name": "probate", "slots": en_probate_slots,
        "vary": [["decedent", "rep", "caseno", "died"], ["decedent", "caseno"], ["decedent", "rep", "attorney", "address"]],
        "titles": ["Notice to Creditors", "NOTICE TO CREDITORS", "Estate of {decedent}"],
        "short": ["Notice to creditors: Estate of {decedent}, deceased, Case No. {caseno}. Claims must be presented to {rep} within four months of {date}."],
        "long": ["NOTICE TO CREDITORS\nIN THE PROBATE COURT OF {county} COUNTY, {state}\nIn the Matter of the Estate of {decedent}, Deceased.\nCase No. {caseno}\nNotice is given that {rep} has been appointed personal representative of the estate of {decedent}, who died on {died}. All persons having claims against the decedent or the estate are required to present their claims within four months after the date of the first publication of this notice, or the claims will be forever barred.\nClaims must be presented to the personal representative at {address}, or filed with the Clerk of the Court.\nDate of first publication: {date}\nAttorney for the estate: {attorney}"],
    },
]


def notice_group(rng, kind, form, size, vary):
    """`size` notices of one form that differ in the slots of `vary`."""
    base = kind["slots"](rng)
    title_template = resolve(rng, rng.choice(kind["titles"]))
    body_template = resolve(rng, rng.choice(kind[form]))
    notices, bodies = [], set()
    for _ in range(size * 20):
        if len(notices) == size:
            break
        fresh = kind["slots"](rng)
        slots = dict(base)
        for key, value in fresh.items():
            if any(key.startswith(name) for name in vary):
                slots[key] = value
        body = body_template.format_map(slots)
        if body in bodies:
            continue
        bodies.add(body)
        notices.append((title_template.format_map(slots), body))
    return notices


# ---------------------------------------------------------------------------
# Edit operations of the copies (positives).
# ---------------------------------------------------------------------------

ZH_PUNCT_SWAPS = [("，", ","), ("，", ", "), ("：", ":"), ("（", "("), ("）", ")"), ("“", "「"), ("”", "」"),
                  ("“", "\""), ("”", "\""), ("；", ";"), ("！", "!"), ("。", ". ")]
ZH_SOURCES = ["来源：{site}", "（来源：{site}）", "【来源：{site}】", "本文来源：{site}", "转自：{site}"]
EN_SOURCES = ["Source: {site}", "This article originally appeared in {site}.", "(Courtesy of {site})",
              "Reporting by {name}; Editing by {name2}", "Reprinted with permission from {site}."]


def op_punct(rng, lang, title, content):
    if lang == "zh":
        swaps = pick(rng, ZH_PUNCT_SWAPS, rng.randrange(1, 4))
        for old, new in swaps:
            content = content.replace(old, new)
        if rng.random() < 0.3:
            content = "".join(chr(ord(c) + 0xFEE0) if "0" <= c <= "9" else c for c in content)
        return title, content
    choice = rng.randrange(4)
    if choice == 0:
        parts = content.split("\"")
        content = "".join(part + ("\u201c" if i % 2 == 0 else "\u201d") for i, part in enumerate(parts[:-1])) + parts[-1]
        content = content.replace("'", "\u2019")
    elif choice == 1:
        content = content.replace(", ", " , ").replace(". ", " . ")
    elif choice == 2:
        content = content.replace(" -- ", " \u2014 ").replace(", ", ",  ")
    else:
        content = content.replace("\"", "''").replace(" percent", "%")
    return title, content


def op_space(rng, lang, title, content):
    paragraphs = content.split("\n")
    choice = rng.randrange(4)
    if lang == "zh":
        if choice == 0:
            return title, "\n".join("\u3000\u3000" + p for p in paragraphs)
        if choice == 1:
            return title, "\n\n".join(paragraphs)
        if choice == 2 and len(paragraphs) > 1:
            return title, "".join(paragraphs)
        return title, "\n".join(p + " " * rng.randrange(1, 3) for p in paragraphs).replace("。", "。&nbsp;", 1)
    if choice == 0:
        width = rng.randrange(58, 77)
        return title, "\n".join(textwrap.fill(p, width) for p in paragraphs)
    if choice == 1:
        return title, "\n\n".join(paragraphs)
    if choice == 2 and len(paragraphs) > 1:
        return title, " ".join(paragraphs)
    return title, content.replace(". ", ".  ")


def op_source(rng, lang, title, content, site):
    if lang == "zh":
        line = rng.choice(ZH_SOURCES).format(site=site[0])
        if rng.random() < 0.3:
            return title, "%s讯　%s" % (site[2], content)
    else:
        line = rng.choice(EN_SOURCES).format(site=site[0], name=en_name(rng), name2=en_name(rng))
        if rng.random() < 0.3:
            return title, "%s (%s) - %s" % (rng.choice(EN_CITIES).upper(), site[2], content)
    return title, content + "\n" + line


def other_site_block(rng, lang, site):
    """Another site's header or footer: part of its footer, or an app,
    disclaimer or original-link passage."""
    slots = site_slots(rng, lang, site)
    if rng.random() < 0.5:
        return footer_passage(rng, lang, rng.randrange(2, 4)).format_map(slots)
    kind = rng.choice(["app", "disclaimer", "original", "login"])
    return boilerplate_passage(rng, lang, kind, rng.choice(["line", "para"])).format_map(slots)


def op_ad(rng, lang, title, content, site):
    block = other_site_block(rng, lang, site)
    if rng.random() < 0.7:
        return title, content + "\n" + block
    return title, block + "\n" + content


def op_truncate(rng, lang, title, content):
    cut = int(len(content) * rng.uniform(0.75, 0.95))
    stops = "。！？" if lang == "zh" else ".!?"
    end = max((content.rfind(stop, 0, cut) for stop in stops), default=-1)
    if end > len(content) * 0.5:
        cut = end + 1
    tail = rng.choice(["", "……", "…阅读全文"] if lang == "zh" else ["", "...", " [...]"])
    return title, content[:cut] + tail


ZH_PREFIXES = ["转发：", "转：", "【{city}】", "#{tag}# ", "快讯｜", "【热点】", "转发微博//@{user}：", "【关注】"]
ZH_SUFFIXES = ["（图）", " http://t.cn/{code}", "[赞]", " #{tag}#", "——来自{site}", "[加油]", "（视频）"]
EN_PREFIXES = ["RT @{user}: ", "BREAKING: ", "JUST IN: ", "Update: ", "#{tag} "]
EN_SUFFIXES = [" via @{user}", " https://t.co/{code}", " #{tag}", " (photos)", " [video]"]
ZH_WORD_SWAPS = [("表示", "称"), ("举行", "召开"), ("近日", "日前"), ("开展", "进行"), ("正式", ""), ("了", ""),
                 ("记者", "本报记者"), ("获悉", "了解到"), ("全市", "全市范围内"), ("目前", "当前")]
EN_WORD_SWAPS = [(" says ", " said "), (" will ", " to "), (" the ", " "), (" new ", " "), ("percent", "pct"), (" and ", " & ")]


def short_tag_slots(rng, lang, facts):
    code = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789") for _ in range(7))
    if lang == "zh":
        return {"city": facts["city"], "tag": facts["city"] + rng.choice(["身边事", "新闻", "热点", "民生"]),
                "user": rng.choice(["小鱼", "晴天", "阿杰", "木子", "星河", "老王"]) + str(rng.randrange(10, 999)),
                "code": code, "site": rng.choice(ZH_SITES)[2] + "客户端"}
    return {"tag": facts["city"].replace(" ", "") + rng.choice(["News", "Local", "Now"]),
            "user": rng.choice(EN_FIRST).lower() + str(rng.randrange(10, 999)), "code": code}


def op_prefix(rng, lang, title, content, facts):
    prefixes = ZH_PREFIXES if lang == "zh" else EN_PREFIXES
    return title, rng.choice(prefixes).format_map(short_tag_slots(rng, lang, facts)) + content


def op_suffix(rng, lang, title, content, facts):
    suffixes = ZH_SUFFIXES if lang == "zh" else EN_SUFFIXES
    return title, content + rng.choice(suffixes).format_map(short_tag_slots(rng, lang, facts))


def op_word(rng, lang, title, content):
    swaps = ZH_WORD_SWAPS if lang == "zh" else EN_WORD_SWAPS
    usable = [swap for swap in swaps if swap[0] in content]
    if not usable:
        return None
    old, new = rng.choice(usable)
    return title, content.replace(old, new, 1)


def retitle(rng, lang, topic, facts, title, first_sentence):
    """Another outlet's headline for one story: another of the topic's
    headlines over the same facts, a tagged headline, or the lead sentence."""
    topics = ZH_TOPICS if lang == "zh" else EN_TOPICS
    choice = rng.random()
    if choice < 0.55:
        for _ in range(10):
            candidate = fill(rng, rng.choice(topics[topic]["headlines"]), facts)
            if candidate != title:
                return candidate
    if choice < 0.8:
        tags = ["【独家】", "重磅！", "转：", "关注｜"] if lang == "zh" else ["UPDATE 1-", "EXCLUSIVE: ", "Local: "]
        return rng.choice(tags) + title
    return first_sentence


# ---------------------------------------------------------------------------
# Near-duplicate guard between unrelated originals (as the bench does):
# character 5-grams of NFKC, lower-cased text without punctuation or spaces.
# ---------------------------------------------------------------------------


def shingles(text):
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(c for c in text if c.isalnum())
    return {text[i:i + 5] for i in range(max(1, len(text) - 4))}


class UnrelatedGuard:
    """Admits a text only when no kept text is above Jaccard 0.5 or contains
    it at more than 0.8. Candidates are the kept texts that share one of the
    text's 12 smallest shingles (by a stable hash)."""

    def __init__(self):
        self.kept = []
        self.postings = defaultdict(list)

    @staticmethod
    def _keys(grams):
        return sorted(grams, key=lambda gram: (hash_text(gram), gram))[:12]

    def admit(self, text):
        grams = shingles(text)
        candidates = set()
        for key in self._keys(grams):
            candidates.update(self.postings.get(key, ()))
        for index in candidates:
            other = self.kept[index]
            shared = len(grams & other)
            if shared / len(grams | other) > 0.5 or shared / min(len(grams), len(other)) > 0.8:
                return False
        index = len(self.kept)
        self.kept.append(grams)
        for key in self._keys(grams):
            self.postings[key].append(index)
        return True


def hash_text(text):
    value = 1469598103934665603
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return value


# ---------------------------------------------------------------------------
# The set: stories placed in one arrival order.
# ---------------------------------------------------------------------------

ZH_COLUMN_PREFIXES = {
    "video": ["视频｜", "【视频】"], "gallery": ["图集｜", "组图：", "【图集】"], "live": ["直播｜", "【直播】"],
    "paywall": ["独家｜", "【会员专享】"], "login": ["深度｜", "【独家】"], "original": ["转载｜", "【转】"],
    "disclaimer": ["资讯｜", "【财经】"], "removed": ["【热点】", "快讯｜"], "app": ["客户端专享｜", "【要闻】"],
}
EN_COLUMN_PREFIXES = {
    "video": ["VIDEO: ", "WATCH: "], "gallery": ["PHOTOS: ", "Gallery: "], "live": ["LIVE: ", "Live updates: "],
    "paywall": ["Subscriber exclusive: ", "Premium: "], "login": ["Members only: ", "Insider: "],
    "original": ["From our partners: ", "Via {app}: "], "disclaimer": ["Sponsored: ", "Partner content: "],
    "removed": ["Breaking: ", "Update: "], "app": ["App exclusive: ", "In the app: "], "cookie": ["Local: ", "News: "],
}
# Copies' op strings list their ops in the bench's order: structure, text,
# additions, formatting.
OP_ORDER = ["ad_del", "truncate", "title", "word", "source", "ad", "prefix", "suffix", "punct", "space"]


def bigram_set(text):
    text = "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())
    return {text[i:i + 2] for i in range(max(1, len(text) - 1))}


def bigram_jaccard(left, right):
    left, right = bigram_set(left), bigram_set(right)
    return len(left & right) / max(1, len(left | right))


class SetBuilder:
    def __init__(self, seed, scale):
        self.rng = random.Random(seed)
        self.scale = scale
        self.horizon = 4500.0 * scale
        self.rows = []
        self.ids = set()
        self.stories = 0
        self.guard = UnrelatedGuard()

    # -- bookkeeping ---------------------------------------------------------

    def count(self, number):
        return max(1, int(round(number * self.scale)))

    def new_story(self):
        self.stories += 1
        return "G%06d" % self.stories

    def new_id(self):
        while True:
            value = "%011x" % self.rng.getrandbits(44)
            if value not in self.ids:
                self.ids.add(value)
                return value

    def add(self, time, title, content, story, bucket, lang, op, kind):
        document = {"id": self.new_id(), "title": title, "content": content, "story": story,
                    "bucket": bucket, "lang": lang, "op": op}
        self.rows.append((time, len(self.rows), document, kind))
        return document

    def arrival(self):
        return self.rng.uniform(0, self.horizon)

    def copy_delay(self):
        if self.rng.random() < 0.75:
            return 0.5 + self.rng.expovariate(1 / 20.0)
        return self.rng.uniform(60, 900)

    def group_times(self, size, burst_share):
        if self.rng.random() < burst_share:
            start = self.arrival()
            width = self.rng.uniform(20, 200)
            return sorted(start + self.rng.uniform(0, width) for _ in range(size))
        return sorted(self.arrival() for _ in range(size))

    def group_size(self, low, high):
        # Most groups small, some large: a triangular draw leaning low.
        return int(round(self.rng.triangular(low, high, low + (high - low) * 0.2)))

    def add_copies(self, time, original, lang, family, count, ops_for):
        """`count` copies of `original`, each made by `ops_for()` -> (op
        names, function of (title, content) -> (title, content) or None)."""
        made = 0
        for _ in range(count * 4):
            if made == count:
                break
            names, apply = ops_for()
            result = apply(original["title"], original["content"])
            if result is None or result == (original["title"], original["content"]):
                continue
            ordered = "+".join(sorted(names, key=OP_ORDER.index))
            self.add(time + self.copy_delay(), result[0], result[1], original["story"], original["bucket"],
                     lang, ordered, "copy:%s:%s" % (family, lang))
            made += 1

    # -- headlines -----------------------------------------------------------

    def site_headlines(self, lang, size, style, kind, site):
        rng = self.rng
        prefixes = (ZH_COLUMN_PREFIXES if lang == "zh" else EN_COLUMN_PREFIXES).get(kind, [""])
        prefix = rng.choice(prefixes).format(app=site[2])
        topics = sorted(ZH_TOPICS if lang == "zh" else EN_TOPICS)
        home = rng.choice(ZH_CITIES if lang == "zh" else EN_CITIES)
        column_topic = rng.choice(topics)
        headlines = []
        for _ in range(size * 30):
            if len(headlines) == size:
                break
            facts = zh_facts(rng) if lang == "zh" else en_facts(rng)
            if style == "mixed":
                headline = headline_only(rng, lang, facts=facts)
            elif style == "local":
                facts["city"] = home
                headline = headline_only(rng, lang, facts=facts)
            else:
                facts["city"] = home
                headline = prefix + headline_only(rng, lang, topic=column_topic, facts=facts)
            if all(bigram_jaccard(headline, other) < 0.5 for other in headlines):
                headlines.append(headline)
        return headlines

    # -- parts of the set ----------------------------------------------------

    def balanced(self, values, count):
        """`count` values, each of `values` as often as the others (+-1), in
        a shuffled order: a group's traits are a design, not a lottery, so
        the rates do not swing with the seed."""
        cycle = []
        while len(cycle) < count:
            chunk = list(values)
            self.rng.shuffle(chunk)
            cycle += chunk
        return cycle[:count]

    def add_boilerplate_pages(self):
        """Pages whose whole body is one site's boilerplate, each under its
        own headline (and a few reposted under the same headline). One group
        per kind of passage and length (times the scale); per-page
        variation and the site's kind of headlines balanced over them."""
        rng = self.rng
        for lang in ("zh", "en"):
            passages = ZH_BOILERPLATE if lang == "zh" else EN_BOILERPLATE
            designs = [(kind, length) for kind in sorted(passages) for length in ("line", "para", "long", "full")]
            count = self.count(len(designs))
            designs = self.balanced(designs, count)
            varied = self.balanced([False, False, True], count)
            styles = self.balanced(["mixed", "local", "column"], count)
            for (kind, length), is_varied, style in zip(designs, varied, styles):
                self.add_boilerplate_group(lang, kind, length, is_varied, style)

    def add_boilerplate_group(self, lang, kind, length, is_varied, style):
        rng = self.rng
        sites = ZH_SITES if lang == "zh" else EN_SITES
        variations = ZH_PAGE_VARIATION if lang == "zh" else EN_PAGE_VARIATION
        site = rng.choice(sites)
        slots = site_slots(rng, lang, site)
        template = boilerplate_passage(rng, lang, kind, length)
        variation = resolve(rng, rng.choice(variations[kind])) if is_varied else None
        variation_first = rng.random() < 0.3
        size = self.group_size(5, 24)
        headlines = self.site_headlines(lang, size, style, kind, site)
        total = rng.randrange(6, 40)
        family = "neg:bp-page:%s:%s:%s:%s:%s" % (lang, kind, length, "varied" if variation else "fixed", style)
        for time, headline in zip(self.group_times(len(headlines), 0.4), headlines):
            day = some_day(rng)
            page_slots = dict(slots, page=rng.randrange(1, total + 1), total=total,
                              pdate=("%d-%02d-%02d %02d:%02d" % (day.year, day.month, day.day, rng.randrange(24), rng.randrange(60))),
                              views=(("%.1f万" % rng.uniform(1, 30)) if lang == "zh" else thousands(rng.randrange(200, 90000))))
            content = template.format_map(page_slots)
            if variation:
                extra = variation.format_map(page_slots)
                content = extra + "\n" + content if variation_first else content + "\n" + extra
            bucket = "short" if len(content) <= 140 else "long"
            original = self.add(time, headline, content, self.new_story(), bucket, lang, "negative:boilerplate", family)
            if rng.random() < 0.12:
                self.add_copies(time, original, lang, "bp-page", 1, lambda: self.format_ops(lang, site))

    def format_ops(self, lang, site):
        rng = self.rng
        names = pick(rng, ["punct", "space", "source"], weighted(rng, [(1, 3), (2, 1)]))

        def apply(title, content):
            for name in sorted(names, key=OP_ORDER.index):
                if name == "punct":
                    title, content = op_punct(rng, lang, title, content)
                elif name == "space":
                    title, content = op_space(rng, lang, title, content)
                else:
                    title, content = op_source(rng, lang, title, content, rng.choice(ZH_SITES if lang == "zh" else EN_SITES))
            return title, content
        return names, apply

    def add_footer_groups(self, lang, groups):
        """Briefs of one site that share its long footer."""
        rng = self.rng
        sites = ZH_SITES if lang == "zh" else EN_SITES
        for _ in range(groups):
            site = rng.choice(sites)
            slots = site_slots(rng, lang, site)
            footer = footer_passage(rng, lang, rng.randrange(4, 8)).format_map(slots)
            editors = [zh_name(rng) if lang == "zh" else en_name(rng) for _ in range(3)] if rng.random() < 0.5 else []
            brief_share = rng.choice([0.5, 0.7, 0.9])
            size = self.group_size(8, 26)
            home = rng.choice(ZH_CITIES if lang == "zh" else EN_CITIES) if rng.random() < 0.5 else None
            for time in self.group_times(size, 0.3):
                length = "brief" if rng.random() < brief_share else "medium"
                for _ in range(30):
                    sentences = rng.randrange(0, 3) if length == "brief" else rng.randrange(3, 7)
                    topic, facts, headline, paragraphs = article(rng, lang, sentences, home)
                    body = "\n".join(paragraphs)
                    if self.guard.admit(body):
                        break
                content = body + "\n" + footer
                if editors:
                    content += "\n" + (("责任编辑：%s" if lang == "zh" else "Edited by %s") % rng.choice(editors))
                bucket = "short" if len(content) <= 140 else "long"
                family = "neg:bp-footer:%s:%s" % (lang, length)
                original = self.add(time, headline, content, self.new_story(), bucket, lang, "negative:boilerplate", family)
                if rng.random() < 0.25:
                    count = rng.choice([1, 1, 2])
                    self.add_copies(time, original, lang, "bp-footer", count,
                                    lambda: self.footer_copy_ops(lang, site, topic, facts, headline, body, paragraphs))

    def footer_copy_ops(self, lang, site, topic, facts, headline, body, paragraphs):
        rng = self.rng
        sites = ZH_SITES if lang == "zh" else EN_SITES
        names = weighted(rng, [(["ad_del"], 4), (["ad_del", "ad"], 3), (["space"], 1), (["punct"], 1),
                               (["title"], 1), (["ad_del", "source"], 2)])

        def apply(title, content):
            for name in sorted(names, key=OP_ORDER.index):
                if name == "ad_del":
                    content = body
                elif name == "ad":
                    title, content = op_ad(rng, lang, title, content, rng.choice(sites))
                elif name == "source":
                    title, content = op_source(rng, lang, title, content, site)
                elif name == "title":
                    title = retitle(rng, lang, topic, facts, title, paragraphs[0])
                elif name == "punct":
                    title, content = op_punct(rng, lang, title, content)
                else:
                    title, content = op_space(rng, lang, title, content)
            return title, content
        return names, apply

    def add_template_groups(self, lang):
        """Notices of one form: each kind in three groups (times the scale),
        short and long in turn, each group redrawing the next of the kind's
        vary sets."""
        rng = self.rng
        sites = ZH_SITES if lang == "zh" else EN_SITES
        for kind in (ZH_NOTICE_KINDS if lang == "zh" else EN_NOTICE_KINDS):
            first_form = rng.randrange(2)
            first_vary = rng.randrange(len(kind["vary"]))
            for group in range(self.count(3)):
                form = ("short", "long")[(first_form + group) % 2]
                vary = kind["vary"][(first_vary + group) % len(kind["vary"])]
                notices = notice_group(rng, kind, form, self.group_size(5, 25), vary)
                family = "neg:template:%s:%s:%s" % (lang, kind["name"], form)
                for time, (title, content) in zip(self.group_times(len(notices), 0.7), notices):
                    bucket = "short" if len(content) <= 140 else "long"
                    original = self.add(time, title, content, self.new_story(), bucket, lang, "negative:template", family)
                    if rng.random() < 0.2:
                        self.add_copies(time, original, lang, "notice", rng.choice([1, 1, 2]),
                                        lambda: self.format_ops(lang, rng.choice(sites)))

    def add_articles(self, lang, count):
        """Long generated articles, some carrying their site's header or
        footer; copies add or remove one, retitle, reformat, cut."""
        rng = self.rng
        sites = ZH_SITES if lang == "zh" else EN_SITES
        made = 0
        while made < count:
            topic, facts, headline, paragraphs = article(rng, lang, rng.randrange(5, 14))
            body = "\n".join(paragraphs)
            if len(body) <= 140 or not self.guard.admit(body):
                continue
            made += 1
            site = rng.choice(sites)
            own_block = None
            content = body
            if rng.random() < 0.25:
                own_block = other_site_block(rng, lang, site)
                content = body + "\n" + own_block if rng.random() < 0.75 else own_block + "\n" + body
            time = self.arrival()
            original = self.add(time, headline, content, self.new_story(), "long", lang, "original", "pos:article:%s" % lang)
            copies = weighted(rng, [(0, 40), (1, 22), (2, 15), (3, 10), (4, 8), (6, 5)])

            def ops_for(topic=topic, facts=facts, body=body, own_block=own_block, paragraphs=paragraphs):
                choices = [("ad", 3), ("title", 3), ("source", 2), ("punct", 2), ("space", 2), ("truncate", 1)]
                if own_block:
                    choices.append(("ad_del", 4))
                first = weighted(rng, choices)
                names = [first]
                if rng.random() < 0.4:
                    second = weighted(rng, choices)
                    if second != first and {first, second} != {"ad", "ad_del"}:
                        names.append(second)

                def apply(title, content):
                    for name in sorted(names, key=OP_ORDER.index):
                        if name == "ad_del":
                            content = body
                        elif name == "truncate":
                            title, content = op_truncate(rng, lang, title, content)
                        elif name == "title":
                            title = retitle(rng, lang, topic, facts, title, paragraphs[0])
                        elif name == "source":
                            title, content = op_source(rng, lang, title, content, rng.choice(sites))
                        elif name == "ad":
                            title, content = op_ad(rng, lang, title, content, rng.choice(sites))
                        elif name == "punct":
                            title, content = op_punct(rng, lang, title, content)
                        else:
                            title, content = op_space(rng, lang, title, content)
                    return title, content
                return names, apply
            self.add_copies(time, original, lang, "article", copies, ops_for)

    def add_short_posts(self, lang, count):
        """Short posts (a lead sentence or a headline) and their reposts."""
        rng = self.rng
        topics = ZH_TOPICS if lang == "zh" else EN_TOPICS
        made = 0
        while made < count:
            facts = zh_facts(rng) if lang == "zh" else en_facts(rng)
            topic = rng.choice(sorted(topics))
            source = topics[topic]["leads"] if rng.random() < 0.6 else topics[topic]["headlines"]
            text = fill(rng, rng.choice(source), facts)
            if len(text) > 140 or not self.guard.admit(text):
                continue
            made += 1
            time = self.arrival()
            original = self.add(time, "", text, self.new_story(), "short", lang, "original", "pos:short:%s" % lang)
            copies = weighted(rng, [(0, 45), (1, 25), (2, 15), (3, 10), (5, 5)])

            def ops_for(facts=facts):
                names = pick(rng, ["prefix", "suffix", "word", "punct", "space"], weighted(rng, [(1, 6), (2, 4)]))

                def apply(title, content):
                    for name in sorted(names, key=OP_ORDER.index):
                        if name == "prefix":
                            title, content = op_prefix(rng, lang, title, content, facts)
                        elif name == "suffix":
                            title, content = op_suffix(rng, lang, title, content, facts)
                        elif name == "word":
                            result = op_word(rng, lang, title, content)
                            if result is None:
                                return None
                            title, content = result
                        elif name == "punct":
                            title, content = op_punct(rng, lang, title, content)
                        else:
                            title, content = op_space(rng, lang, title, content)
                    return title, content
                return names, apply
            self.add_copies(time, original, lang, "short", copies, ops_for)

    def build(self):
        self.add_boilerplate_pages()
        for lang in ("zh", "en"):
            self.add_footer_groups(lang, self.count(10))
            self.add_template_groups(lang)
            self.add_articles(lang, self.count(420 if lang == "zh" else 330))
            self.add_short_posts(lang, self.count(260 if lang == "zh" else 200))
        self.rows.sort(key=lambda row: (row[0], row[1]))
        return [(document, kind) for _, _, document, kind in self.rows]


def write_set(out_dir, rows):
    os.makedirs(out_dir, exist_ok=True)
    set_path = os.path.join(out_dir, "negsets.jsonl")
    kinds_path = os.path.join(out_dir, "negsets.kinds.tsv")
    with open(set_path, "w", encoding="utf-8") as out:
        for document, _ in rows:
            out.write(json.dumps(document, ensure_ascii=False) + "\n")
    with open(kinds_path, "w", encoding="utf-8") as out:
        for document, kind in rows:
            out.write("%s\t%s\n" % (document["id"], kind))
    return set_path, kinds_path


def summary(rows):
    by_op = Counter()
    by_family = Counter()
    for document, kind in rows:
        by_op[document["op"] if document["op"].startswith(("negative", "original")) else "copy"] += 1
        parts = kind.split(":")
        by_family[":".join(parts[:3])] += 1
    lines = ["documents %d" % len(rows)]
    lines += ["  %-22s %5d" % item for item in sorted(by_op.items())]
    lines += ["  %-22s %5d" % item for item in sorted(by_family.items())]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Breakdown of a prediction by the finer kinds of the side file.
# ---------------------------------------------------------------------------


def read_jsonl(path):
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def breakdown(set_path, kinds_path, pred_path):
    documents = read_jsonl(set_path)
    kinds = {}
    with open(kinds_path, encoding="utf-8") as lines:
        for line in lines:
            identifier, kind = line.rstrip("\n").split("\t")
            kinds[identifier] = kind
    roots = {row["id"]: row.get("cluster_root") for row in read_jsonl(pred_path)}
    story_of = {d["id"]: d["story"] for d in documents}
    root_of = {d["id"]: roots.get(d["id"]) or ("missing:" + d["id"]) for d in documents}
    stories_in_class = defaultdict(set)
    for d in documents:
        stories_in_class[root_of[d["id"]]].add(d["story"])
    original_of_story = {}
    for d in documents:
        if not d["op"].startswith("negative:") and d["op"] != "original":
            continue
        original_of_story.setdefault(d["story"], d["id"])

    negatives = defaultdict(lambda: [0, 0])
    copies = defaultdict(lambda: [0, 0])
    for d in documents:
        kind = kinds[d["id"]].split(":")
        if kind[0] == "neg":
            merged = len(stories_in_class[root_of[d["id"]]]) > 1
            family, lang = kind[1], kind[2]
            keys = ["%s %s" % (family, lang), "%s all" % family]
            if family == "bp-page":
                keys += ["bp-page kind %s" % kind[3], "bp-page length %s" % kind[4], "bp-page %s" % kind[5],
                         "bp-page headlines %s" % kind[6], "bp-page %s bucket %s" % (lang, d["bucket"])]
            elif family == "bp-footer":
                keys += ["bp-footer %s %s" % (lang, kind[3])]
            else:
                keys += ["template %s %s" % (lang, kind[3]), "template form %s" % kind[4],
                         "template %s bucket %s" % (lang, d["bucket"])]
            for key in keys:
                negatives[key][0] += 1
                negatives[key][1] += merged
        elif kind[0] == "pos":
            # Unrelated ordinary stories: a merge here is the generator's fault.
            merged = len(stories_in_class[root_of[d["id"]]]) > 1
            for key in ["ordinary %s %s" % (kind[1], kind[2])]:
                negatives[key][0] += 1
                negatives[key][1] += merged
        elif kind[0] == "copy":
            original = original_of_story[story_of[d["id"]]]
            joined = root_of[original] == root_of[d["id"]]
            for key in ["%s %s" % (kind[1], kind[2])] + ["%s op %s" % (kind[1], op) for op in d["op"].split("+")]:
                copies[key][0] += 1
                copies[key][1] += joined
    print("hard negatives (and ordinary originals): share of documents in a class with another story")
    for key in sorted(negatives):
        total, merged = negatives[key]
        print("  %-36s %5d  %6.1f %%" % (key, total, 100.0 * merged / total))
    print("copies: share joined to their story's first document")
    for key in sorted(copies):
        total, joined = copies[key]
        print("  %-36s %5d  %6.1f %%" % (key, total, 100.0 * joined / total))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser("generate", help="write negsets.jsonl and negsets.kinds.tsv into OUTDIR")
    generate.add_argument("out_dir")
    generate.add_argument("--seed", type=int, default=DEFAULT_SEED)
    generate.add_argument("--scale", type=float, default=1.0)
    explain = commands.add_parser("breakdown", help="false merges and recall by finer kind")
    explain.add_argument("set_path")
    explain.add_argument("kinds_path")
    explain.add_argument("pred_path")
    arguments = parser.parse_args(argv)
    if arguments.command == "generate":
        rows = SetBuilder(arguments.seed, arguments.scale).build()
        set_path, _ = write_set(arguments.out_dir, rows)
        print(summary(rows), file=sys.stderr)
        print(set_path)
        return 0
    breakdown(arguments.set_path, arguments.kinds_path, arguments.pred_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
