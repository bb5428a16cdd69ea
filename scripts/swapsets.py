#!/usr/bin/env python3
"""Generated sets of the two cases issue 46 names: one slot swapped.

Motivation: the separate set from other sources shows two failures that
scripts/negsets.py cannot: form documents (court decisions, administrative
notices) that differ only in a person's full name are merged (its notices
use anonymised parties, 方某, and numbers that change with the party), and
short reposts that swap a word for a synonym and add a tag or a source line
are missed. Both are one slot swapped; what decides is whether the slot
identifies the document (a party) or not (a reworded verb).

Design: two sets, each written in the bench's JSON-lines format with a side
file of finer kinds (read by `negsets.py breakdown`):

- `names`: groups of 4-12 form documents (Chinese and English; short and
  long) that share every slot, case number and date included, and differ
  only in the full names of one or two parties. Names are a surname (one
  or two characters) and one or two given characters, or a first and last
  name. A quarter of the documents are reposted (punctuation, layout, a
  source line, Traditional script): these must keep joining.
- `reposts`: short Chinese posts (negsets.py's leads and headlines) and
  their reposts that swap one or two words for synonyms and add a tag,
  "转发" or a source line before or after, some in Traditional script; and,
  as hard negatives, twins of some posts with one word swapped for its
  opposite ("开通" / "停运"), which are other news.

Every phrase list that a set is judged with exists twice: a tuning pool
and a judging pool (surnames, given-name characters, first and last names,
the forms and their party slots, synonym pairs, opposites, prefixes and
suffixes), disjoint. Tune on `--pool tune`, report `--pool judge` at
another seed; nothing of the judging pool may enter a list the engine
reads (docs/quality.md says which is which).

Consequences: generated forms are exactly one skeleton, so the names set
measures the party swap alone; the reposts set's bases are negsets.py's
templates, so its recall says how edits are read, not how varied real posts
are. Python 3 standard library; one seed and pool give one file byte for
byte.

Usage:
  scripts/swapsets.py generate {names,reposts} OUTDIR [--seed N] [--pool tune|judge] [--scale F]
"""

import argparse
import datetime
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import negsets  # noqa: E402  (the sibling generator: bookkeeping, edit ops)
from negsets import (  # noqa: E402
    SetBuilder, fill, op_punct, op_source, op_space, resolve, some_day, weighted,
    write_set, summary, zh_date, en_date, zh_company, en_company, zh_road,
)

DEFAULT_SEEDS = {"tune": 46, "judge": 4646}

# ---------------------------------------------------------------------------
# Simplified → Traditional for the characters these sets use most (a copy
# in Traditional script; characters not listed stay as they are, as in a
# partly converted repost). Written for this file.
# ---------------------------------------------------------------------------

S2T_PAIRS = (
    "们們国國会會说說这這时時为為对對发發业業经經动動进進过過现現开開关關问問题題长長门門车車东東"
    "见見书書学學实實头頭点點电電话話语語机機体體当當从從还還没沒认認记記让讓应應该該与與单單审審"
    "诉訴讼訟议議决決权權务務费費责責员員处處罚罰规規据據号號场場区區县縣镇鎮乡鄉农農产產价價买買"
    "卖賣图圖网網视視频頻级級计計划劃设設备備报報导導园園厂廠广廣馆館医醫疗療药藥卫衛检檢测測验驗"
    "证證协協调調组組织織统統领領众眾参參赛賽选選获獲队隊万萬亿億数數达達节節运運输輸铁鐵线線桥橋"
    "轨軌飞飛游遊乐樂欢歡庆慶华華丽麗强強岁歲师師龄齡儿兒帮幫际際标標准準确確块塊银銀钱錢财財贷貸"
    "负負债債险險营營销銷质質环環态態护護气氣温溫热熱风風云雲阳陽阴陰湿濕灾災难難灯燈轮輪军軍战戰"
    "胜勝讯訊闻聞听聽声聲纪紀录錄顺順续續继繼结結约約终終给給红紅绿綠蓝藍练練习習户戶厅廳层層楼樓"
    "购購货貨资資税稅额額优優补補贴貼诊診扩擴张張换換损損举舉办辦兴興击擊启啟术術项項团團专專历歷"
    "传傳统統边邊远遠迁遷释釋违違纠糾纷紛执執义義赔賠偿償属屬亲親离離劳勞写寫请請询詢讲講词詞谈談"
    "论論识識读讀课課详詳细細纳納缴繳压壓严嚴丰豐粮糧种種树樹类類总總间間宁寧夺奪满滿饮飲饭飯挂掛"
    "叶葉岭嶺湾灣滨濱渔漁钢鋼艺藝剧劇观觀览覽辉輝荣榮奖獎励勵称稱颁頒韩韓鲁魯苏蘇刘劉陈陳杨楊赵趙"
    "吴吳郑鄭谢謝冯馮邓鄧罗羅许許孙孫马馬钟鐘谭譚陆陸贾賈龙龍顾顧龚龔蒋蔣卢盧庞龐聂聶颜顏乔喬齐齊"
    "邹鄒贺賀凤鳳兰蘭鹏鵬伟偉杰傑涛濤刚剛静靜颖穎晓曉泽澤铭銘瑶瑤锋鋒凯凱帅帥后後几幾个個么麼积積"
    "于於庭庭诸諸葛葛欧歐阳陽闫閆汤湯钱錢严嚴龙龍韦韋顺順"
)
S2T = {S2T_PAIRS[i]: S2T_PAIRS[i + 1] for i in range(0, len(S2T_PAIRS) - 1, 2)}


def to_traditional(text):
    return "".join(S2T.get(c, c) for c in text)


# ---------------------------------------------------------------------------
# The two pools. Each list is split in two (written so, or by alternate
# items of negsets.py's lists); the engine reads none of them.
# ---------------------------------------------------------------------------

SURNAMES = [s for s in negsets.ZH_SURNAMES if len(s) == 1]
COMPOUND_SURNAMES = {"tune": ["欧阳", "司马", "皇甫"], "judge": ["上官", "诸葛", "东方"]}
GIVEN = negsets.ZH_GIVEN
POOLS = {
    "tune": {
        "surnames": SURNAMES[0::2],
        "given": GIVEN[0::2],
        "first": negsets.EN_FIRST[0::2],
        "last": negsets.EN_LAST[0::2],
    },
    "judge": {
        "surnames": SURNAMES[1::2],
        "given": GIVEN[1::2],
        "first": negsets.EN_FIRST[1::2],
        "last": negsets.EN_LAST[1::2],
    },
}


def zh_full_name(rng, pool, surname=None):
    names = POOLS[pool]
    if surname is None:
        surname = (rng.choice(COMPOUND_SURNAMES[pool]) if rng.random() < 0.06
                   else rng.choice(names["surnames"]))
    given = rng.choice(names["given"])
    if rng.random() < 0.7:
        given += rng.choice(names["given"])
    return surname + given


def en_full_name(rng, pool, last=None):
    names = POOLS[pool]
    first = rng.choice(names["first"])
    last = last or rng.choice(names["last"])
    if rng.random() < 0.15:
        return "%s %s. %s" % (first, chr(ord("A") + rng.randrange(26)), last)
    return "%s %s" % (first, last)


ZH_ACTS = ["作出的行政处罚决定", "作出的不予登记决定", "作出的工伤认定决定", "作出的房屋征收补偿决定",
           "作出的信息公开答复", "作出的责令限期拆除决定", "作出的不予受理决定"]
ZH_CAUSES = ["买卖合同纠纷", "民间借贷纠纷", "房屋租赁合同纠纷", "劳务合同纠纷", "机动车交通事故责任纠纷",
             "物业服务合同纠纷", "建设工程施工合同纠纷", "追索劳动报酬纠纷"]
ZH_AGENCIES = ["市场监督管理局", "人力资源和社会保障局", "自然资源和规划局", "住房和城乡建设局", "公安局交通警察支队",
               "城市管理综合执法局", "生态环境局"]
ZH_FIRMS = ["律师事务所", "律师事务所", "法律服务所"]


def zh_form_slots(rng):
    city = rng.choice(negsets.ZH_CITIES)
    district = rng.choice(negsets.ZH_DISTRICTS)
    day = some_day(rng)
    return {
        "court": "%s市%s人民法院" % (city, district),
        "upper": "%s市中级人民法院" % city,
        "agency": "%s市%s%s" % (city, district, rng.choice(ZH_AGENCIES)),
        "act": rng.choice(ZH_ACTS), "cause": rng.choice(ZH_CAUSES),
        "company": zh_company(rng, city), "firm": rng.choice(negsets.ZH_COMPANY_HEADS) + rng.choice(ZH_FIRMS),
        "caseno": "（%d）%s%04d行初%d号" % (day.year, rng.choice(negsets.ZH_PROVINCE_ABBR), rng.randrange(101, 9999), rng.randrange(10, 999)),
        "civilno": "（%d）%s%04d民初%d号" % (day.year, rng.choice(negsets.ZH_PROVINCE_ABBR), rng.randrange(101, 9999), rng.randrange(100, 29999)),
        "date": zh_date(day), "later": zh_date(day + datetime.timedelta(days=rng.randrange(20, 60))),
        "address": city + "市" + district + zh_road(rng) + "%d号" % rng.randrange(1, 300),
        "sex": rng.choice(["男", "女"]), "born": "%d年%d月%d日" % (rng.randrange(1955, 2000), rng.randrange(1, 13), rng.randrange(1, 29)),
        "ethnic": rng.choice(negsets.ZH_ETHNIC), "fine": rng.choice(["2000元", "5000元", "1万元", "3万元"]),
    }


def en_form_slots(rng):
    day = some_day(rng)
    county = rng.choice(negsets.EN_COUNTIES)
    return {
        "court": "Superior Court of %s County, %s" % (county, rng.choice(negsets.EN_STATES)),
        "agency": rng.choice(["Department of Motor Vehicles", "Zoning Board", "Department of Revenue", "Licensing Board"]),
        "company": en_company(rng), "caseno": "%d-CV-%05d" % (day.year, rng.randrange(1, 99999)),
        "date": en_date(day), "later": en_date(day + datetime.timedelta(days=rng.randrange(20, 60))),
        "address": negsets.en_address(rng), "city": rng.choice(negsets.EN_CITIES),
    }


# Forms by pool: the party slots are p1, p2 (names); `vary` lists which of
# them change between the documents of a group.
FORMS = {
    "tune": [
        {"lang": "zh", "name": "admin-plaintiff", "form": "short", "vary": [["p1"]],
         "title": ["", "{court}行政判决书"],
         "body": "原告{p1}不服被告{agency}{act}，[于{date}|]向本院提起行政诉讼。本院受理后，依法组成合议庭，公开开庭审理了本案。[原告{p1}到庭参加诉讼。|]"},
        {"lang": "zh", "name": "civil-header", "form": "long", "vary": [["p1"], ["p1", "p2"], ["p2"]],
         "title": ["{court}民事判决书", "民事判决书"],
         "body": "{court}\n民事判决书\n{civilno}\n原告：{p1}，{sex}，{born}出生，{ethnic}，住{address}。\n委托诉讼代理人：{p2}，{firm}律师。\n被告：{company}。\n原告{p1}与被告{company}{cause}一案，本院于{date}立案后，依法适用简易程序，公开开庭进行了审理。原告{p1}及其委托诉讼代理人{p2}到庭参加诉讼，被告经传票传唤无正当理由拒不到庭。本案现已审理终结。\n原告{p1}向本院提出诉讼请求：判令被告支付欠款及利息，并承担本案诉讼费用。事实和理由：双方建立合作关系后，被告未按约定履行付款义务，经原告多次催要未果，故诉至法院。"},
        {"lang": "zh", "name": "summons", "form": "short", "vary": [["p1"]],
         "title": ["{court}公告", "公告"],
         "body": "{p1}：本院受理原告{company}诉你{cause}一案，现依法向你公告送达起诉状副本、应诉通知书及开庭传票。自公告之日起经过三十日即视为送达。"},
        {"lang": "zh", "name": "penalty-person", "form": "long", "vary": [["p1"]],
         "title": ["行政处罚决定书", "{agency}行政处罚决定书"],
         "body": "{agency}\n行政处罚决定书\n当事人：{p1}，{sex}，{born}出生，住{address}。\n当事人{p1}于{date}未经许可擅自从事经营活动，[执法人员|本机关执法人员]依法进行了现场检查，当事人对上述事实无异议。本机关认为，当事人的行为违反了有关规定，依法决定对当事人{p1}处以罚款{fine}。\n当事人如不服本决定，可在收到本决定书之日起六十日内申请行政复议，或者在六个月内依法提起行政诉讼。\n{agency}\n{later}"},
        {"lang": "zh", "name": "sentence", "form": "short", "vary": [["p1"]],
         "title": ["", "刑事判决书"],
         "body": "被告人{p1}[因犯盗窃罪|因犯诈骗罪]，经本院审理，于{date}依法判处有期徒刑一年[，并处罚金{fine}|]。"},
        {"lang": "en", "name": "defendant", "form": "short", "vary": [["p1"]],
         "title": ["", "Court notice"],
         "body": "Defendant {p1} must appear in Courtroom 4 on {later}, {court}."},
        {"lang": "en", "name": "plaintiff", "form": "short", "vary": [["p1"]],
         "title": ["", "Notice of Hearing"],
         "body": "{court}: Plaintiff {p1} v. {company}, Case No. {caseno}. A hearing on the motion for summary judgment is set for {later}."},
        {"lang": "en", "name": "complaint", "form": "long", "vary": [["p1"], ["p1", "p2"]],
         "title": ["Notice of Complaint", "Legal Notice"],
         "body": "IN THE {court}\nCase No. {caseno}\nPlaintiff {p1}, represented by attorney {p2}, filed a complaint against {company} on {date}, alleging breach of contract and seeking damages.\nThe defendant is required to serve a written answer on the plaintiff's attorney within thirty days after service of this notice. If the defendant fails to do so, judgment by default may be entered against it for the relief demanded in the complaint.\nA case management conference is set for {later} in the courthouse at {address}."},
    ],
    "judge": [
        {"lang": "zh", "name": "appeal", "form": "short", "vary": [["p1"]],
         "title": ["", "{upper}民事判决书"],
         "body": "上诉人{p1}因与被上诉人{company}{cause}一案，不服{court}{civilno}民事判决，向本院提起上诉。本院于{date}立案后，依法组成合议庭审理了本案。"},
        {"lang": "zh", "name": "third-party", "form": "long", "vary": [["p1"], ["p2"], ["p1", "p2"]],
         "title": ["{court}行政判决书", "行政判决书"],
         "body": "{court}\n行政判决书\n{caseno}\n原告：{company}。\n被告：{agency}。\n第三人：{p1}，{sex}，{born}出生，住{address}。\n委托代理人：{p2}，{firm}律师。\n原告{company}不服被告{agency}{act}，于{date}向本院提起行政诉讼。本院依法组成合议庭，公开开庭审理了本案。第三人{p1}及其委托代理人{p2}到庭参加诉讼。本案现已审理终结。\n原告诉称，被告作出的决定认定事实不清，适用法律错误，请求依法撤销。被告辩称，其作出的决定事实清楚，程序合法，请求驳回原告的诉讼请求。"},
        {"lang": "zh", "name": "arbitration", "form": "short", "vary": [["p1"]],
         "title": ["", "仲裁庭开庭通知"],
         "body": "申请人{p1}与被申请人{company}劳动争议一案，本委已依法受理，定于{later}在本委仲裁庭开庭审理，请双方当事人准时到庭。"},
        {"lang": "zh", "name": "execution", "form": "long", "vary": [["p1"], ["p1", "p2"]],
         "title": ["执行裁定书", "{court}执行裁定书"],
         "body": "{court}\n执行裁定书\n申请执行人：{p2}，{sex}，{born}出生，住{address}。\n被执行人：{p1}。\n申请执行人{p2}与被执行人{p1}{cause}一案，本院作出的民事判决书已经发生法律效力。因被执行人{p1}未按期履行生效法律文书确定的义务，申请执行人向本院申请强制执行，本院于{date}依法立案执行。\n执行中，本院依法向被执行人发出执行通知书，并通过网络执行查控系统查询其名下财产，未发现可供执行的财产。依照有关规定，裁定如下：终结本次执行程序。"},
        {"lang": "en", "name": "petitioner", "form": "short", "vary": [["p1"], ["p1", "p2"]],
         "title": ["", "Notice of Hearing"],
         "body": "In re the marriage of Petitioner {p1} and Respondent {p2}, {court}, Case No. {caseno}: a hearing on the petition is set for {later}."},
        {"lang": "en", "name": "guardian", "form": "long", "vary": [["p1"], ["p2"]],
         "title": ["Notice of Petition for Guardianship", "Legal Notice"],
         "body": "IN THE {court}\nIn the Matter of the Guardianship of {p1}\nCase No. {caseno}\nNotice is given that {p2} has filed a petition to be appointed guardian of {p1}, an adult alleged to be incapacitated. A hearing on the petition will be held on {later} at the courthouse at {address}.\nAny person who wishes to object to the appointment must file a written objection with the clerk of the court before the hearing. The person alleged to be incapacitated has the right to attend the hearing and to be represented by counsel."},
    ],
}

# Synonym pairs a repost may swap (left word → right word), opposites that
# make another story, verbs of another action that make another story too
# (neither synonyms nor opposites: 开展 / 筹备, 完工 / 开工), and what a repost
# puts around a post.
REPOST_POOLS = {
    "tune": {
        "synonyms": [("获悉", "得知"), ("增长", "增加"), ("开展", "举办"), ("发布", "公布"), ("取得", "获得"),
                     ("抓获", "抓捕"), ("游客", "旅客"), ("完工", "竣工"), ("近日", "日前"), ("参加", "参与"),
                     ("持续", "继续"), ("迎来", "迎接"), ("成功", "顺利"), ("优化", "改进"), ("进入", "步入"),
                     ("居民", "住户")],
        "opposites": [("增长", "下降"), ("开通", "停运"), ("新建", "拆除"), ("开放", "关闭"), ("启动", "暂停")],
        "actions": [("开展", "筹备"), ("发布", "审议"), ("参加", "观看"), ("完工", "开工"), ("接待", "预约"),
                    ("取得", "寻求")],
        "prefixes": ["转发：", "【{city}】", "#{tag}# ", "快讯｜", "转发微博//@{user}："],
        "suffixes": ["（图）", " #{tag}#", "——来自{site}", "[赞]", " http://t.cn/{code}"],
    },
    "judge": {
        "synonyms": [("了解到", "获知"), ("启动", "开启"), ("推出", "上线"), ("实现", "达成"), ("突破", "超过"),
                     ("开通", "开行"), ("接待", "接纳"), ("破获", "侦破"), ("夺得", "摘得"), ("群众", "民众"),
                     ("选手", "运动员"), ("建成", "落成"), ("设置", "设立"), ("专家", "学者"), ("结束", "落幕"),
                     ("方便", "便利")],
        "opposites": [("上涨", "下跌"), ("开幕", "闭幕"), ("增加", "减少"), ("建成", "停工"), ("夺得", "丢掉")],
        "actions": [("实现", "预计"), ("迎来", "送别"), ("惠及", "涉及"), ("突破", "接近"), ("启动", "筹划"),
                    ("接待", "招募")],
        "prefixes": ["转：", "【关注】", "【热点】", "//@{user}：", "扩散！", "速看："],
        "suffixes": ["[加油]", "（视频）", " 来源：{site}", "（转自{site}）", "[话筒]"],
    },
}


# Cut copies (`cuts`): what a platform's cut leaves after the kept words,
# and the comments English reposts put before them, one list per pool.
CUT_POOLS = {
    "tune": {
        "zh_tails": ["...", "…", "... http://t.cn/{code}", "…… 全文：http://t.cn/{code}"],
        "en_tails": ["...", "… https://bit.ly/{code}", "... https://t.co/{code}"],
        "en_prefixes": ["Must read: ", "Wow. ", "RT @{user}: "],
    },
    "judge": {
        "zh_tails": ["……", "... 网页链接", "… http://t.cn/{code}", "...（转）http://t.cn/{code}"],
        "en_tails": ["…", "... http://ow.ly/{code}", "… https://t.co/{code} via @{user}"],
        "en_prefixes": ["Read this: ", "Big news! ", "via @{user}: "],
    },
}


def letters_in(text):
    return sum(1 for c in text if c.isalnum())


def cut_after_letters(text, letters, rng, lang):
    """`text` up to its `letters`-th letter; in English, at the end of that
    word half the time (a platform cuts words too)."""
    seen = 0
    for index, c in enumerate(text):
        seen += c.isalnum()
        if seen == letters:
            end = index + 1
            if lang == "en" and rng.random() < 0.5:
                while end < len(text) and text[end].isalnum():
                    end += 1
            return text[:end].rstrip(" ,，、")
    return text


class SwapSetBuilder(SetBuilder):
    def __init__(self, seed, scale, pool):
        super().__init__(seed, scale)
        self.pool = pool
        self.horizon = 1500.0 * scale
        # The twins of another action draw from a generator of their own, so
        # that adding them left every other document of the sets as it was.
        self.action_rng = random.Random(seed * 7919 + 1)

    # -- names ---------------------------------------------------------------

    def fresh_name(self, lang, taken, keep_surname_of=None):
        rng = self.rng
        for _ in range(200):
            if lang == "zh":
                surname = None
                if keep_surname_of and rng.random() < 0.3:
                    # The same common surname, another person.
                    surname = keep_surname_of[:2] if keep_surname_of[:2] in COMPOUND_SURNAMES[self.pool] else keep_surname_of[:1]
                name = zh_full_name(rng, self.pool, surname)
            else:
                last = keep_surname_of.split()[-1] if keep_surname_of and rng.random() < 0.3 else None
                name = en_full_name(rng, self.pool, last)
            if name not in taken:
                taken.add(name)
                return name
        return None

    def add_name_groups(self):
        rng = self.rng
        for form in FORMS[self.pool]:
            lang = form["lang"]
            for vary in form["vary"]:
                for _ in range(self.count(4)):
                    self.add_name_group(form, lang, vary)

    def add_name_group(self, form, lang, vary):
        rng = self.rng
        slots = zh_form_slots(rng) if lang == "zh" else en_form_slots(rng)
        taken = set()
        for party in ("p1", "p2"):
            slots[party] = self.fresh_name(lang, taken)
        body_template = resolve(rng, form["body"])
        title_template = resolve(rng, rng.choice(form["title"]))
        size = self.group_size(4, 12)
        family = "neg:names:%s:%s:%s" % (lang, form["name"], form["form"])
        times = self.group_times(size, 0.6)
        for index, time in enumerate(times):
            own = dict(slots)
            if index > 0:
                for party in vary:
                    name = self.fresh_name(lang, taken, keep_surname_of=slots[party])
                    if name is None:
                        return
                    own[party] = name
            content = body_template.format_map(own)
            title = title_template.format_map(own)
            bucket = "short" if len(content) <= 140 else "long"
            original = self.add(time, title, content, self.new_story(), bucket, lang, "negative:template",
                                family + ":" + "+".join(vary))
            if rng.random() < 0.25:
                self.add_copies(time, original, lang, "names", rng.choice([1, 1, 2]),
                                lambda lang=lang: self.notice_copy_ops(lang))

    def notice_copy_ops(self, lang):
        rng = self.rng
        choices = ["punct", "space", "source"] + (["trad"] if lang == "zh" else [])
        names = negsets.pick(rng, choices, weighted(rng, [(1, 6), (2, 4)]))
        site = rng.choice(negsets.ZH_SITES if lang == "zh" else negsets.EN_SITES)

        def apply(title, content):
            for name in ("source", "punct", "space", "trad"):
                if name not in names:
                    continue
                if name == "source":
                    title, content = op_source(rng, lang, title, content, site)
                elif name == "punct":
                    title, content = op_punct(rng, lang, title, content)
                elif name == "space":
                    title, content = op_space(rng, lang, title, content)
                else:
                    title, content = to_traditional(title), to_traditional(content)
            return title, content
        return [name for name in names if name != "trad"] + (["trad"] if "trad" in names else []), apply

    # -- reposts ---------------------------------------------------------------

    def add_reposts(self):
        rng = self.rng
        pool = REPOST_POOLS[self.pool]
        topics = negsets.ZH_TOPICS
        made, tries = 0, 0
        count = self.count(320)
        while made < count and tries < count * 400:
            tries += 1
            facts = negsets.zh_facts(rng)
            topic = rng.choice(sorted(topics))
            source = topics[topic]["leads"] if rng.random() < 0.6 else topics[topic]["headlines"]
            text = fill(rng, rng.choice(source), facts)
            usable = [pair for pair in pool["synonyms"] if pair[0] in text]
            if len(text) > 140 or not usable or not self.guard.admit(text):
                continue
            made += 1
            time = self.arrival()
            original = self.add(time, "", text, self.new_story(), "short", "zh", "original", "pos:repost:zh")
            opposite = [pair for pair in pool["opposites"] if pair[0] in text]
            if opposite and rng.random() < 0.5:
                old, new = rng.choice(opposite)
                twin = text.replace(old, new, 1)
                self.add(time + self.copy_delay(), "", twin, self.new_story(), "short", "zh", "negative:opposite",
                         "neg:opposite:zh:%s:short" % old)
            self.add_action_twin(time, text, pool)
            copies = weighted(rng, [(1, 40), (2, 35), (3, 25)])
            self.add_copies(time, original, "zh", "repost", copies,
                            lambda facts=facts, text=text: self.repost_ops(facts, text))

    def add_action_twin(self, time, text, pool):
        """Half the posts that hold a verb of the pool's `actions` get a twin
        that reports another action in its place: another story, which
        only the verb tells apart."""
        side = self.action_rng
        actions = [pair for pair in pool["actions"] if pair[0] in text]
        if not actions or side.random() >= 0.5:
            return
        old, new = side.choice(actions)
        main, self.rng = self.rng, side
        try:
            self.add(time + self.copy_delay(), "", text.replace(old, new, 1), self.new_story(), "short", "zh",
                     "negative:action", "neg:action:zh:%s:short" % old)
        finally:
            self.rng = main

    def repost_ops(self, facts, text):
        rng = self.rng
        pool = REPOST_POOLS[self.pool]
        usable = [pair for pair in pool["synonyms"] if pair[0] in text]
        swaps = negsets.pick(rng, usable, min(len(usable), rng.choice([1, 1, 2])))
        edges = rng.choice([["prefix"], ["suffix"], ["prefix", "suffix"]])
        script = rng.random() < 0.3

        def apply(title, content):
            for old, new in swaps:
                content = content.replace(old, new, 1)
            slots = negsets.short_tag_slots(rng, "zh", facts)
            if "prefix" in edges:
                content = rng.choice(pool["prefixes"]).format_map(slots) + content
            if "suffix" in edges:
                content = content + rng.choice(pool["suffixes"]).format_map(slots)
            if script:
                content = to_traditional(content)
            return title, content
        names = ["word"] + edges + (["trad"] if script else [])
        return names, apply

    # -- cuts ----------------------------------------------------------------

    def cut_post(self, lang):
        """A post of 60 to 99 letters (a short text): a Chinese lead and the
        sentences after it, or an English lead. None when it came out of
        that length."""
        rng = self.rng
        facts = negsets.zh_facts(rng) if lang == "zh" else negsets.en_facts(rng)
        _, _, headline, paragraphs = negsets.article(rng, lang, sentences=3)
        if lang == "zh":
            sentences = "".join(paragraphs)
            text = ""
            for sentence in sentences.replace("。", "。\n").split("\n"):
                if letters_in(text + sentence) > 99:
                    break
                text += sentence
        else:
            text = paragraphs[0].split(". ")[0].rstrip(".") + "."
        if not 60 <= letters_in(text) <= 99 or not self.guard.admit(text):
            return None, facts, headline
        return text, facts, headline

    def cut_copy(self, lang, text, facts, keep):
        rng = self.rng
        pools = CUT_POOLS[self.pool]
        slots = negsets.short_tag_slots(rng, lang, facts)
        tail = rng.choice(pools["zh_tails" if lang == "zh" else "en_tails"]).format_map(slots)
        space = "" if lang == "zh" or tail[0] == "…" or rng.random() < 0.7 else " "
        copy = cut_after_letters(text, keep, rng, lang) + space + tail
        names = ["cut"]
        if rng.random() < 0.3:
            prefixes = REPOST_POOLS[self.pool]["prefixes"] if lang == "zh" else pools["en_prefixes"]
            copy = rng.choice(prefixes).format_map(slots) + copy
            names.append("prefix")
        return names, copy

    def add_cuts(self):
        """Posts, the copies a platform cut short (an ellipsis and a link
        where the rest was, some with a repost's prefix), and English
        headlines with a wire byline ("… by JANE DOE"). Hard negatives: a
        post that shares only an opening (under 40 letters) with another,
        cut right after it, and a cut copy of a twin that swaps one word for
        its opposite before the cut."""
        rng = self.rng
        made, tries = 0, 0
        count = self.count(240)
        while made < count and tries < count * 400:
            tries += 1
            lang = "zh" if rng.random() < 0.6 else "en"
            text, facts, headline = self.cut_post(lang)
            if text is None:
                continue
            made += 1
            time = self.arrival()
            length = letters_in(text)
            story = self.new_story()
            # A twin that swaps a word for its opposite, cut after the swap.
            # The original's own cut copies keep the word too: one cut before
            # it would be a copy of both (and join them, rightly).
            twin, first_keep = None, 45
            opposite = [pair for pair in REPOST_POOLS[self.pool]["opposites"] if pair[0] in text]
            if lang == "zh" and opposite:
                old, new = rng.choice(opposite)
                swapped_end = letters_in(text[:text.index(old)]) + len(old)
                if swapped_end + 1 < length - 7:
                    twin, first_keep = text.replace(old, new, 1), max(45, swapped_end + 1)
            original = self.add(time, "", text, story, "short", lang, "original", "pos:cut:%s" % lang)
            copies = weighted(rng, [(1, 45), (2, 35), (3, 20)])

            def cut_ops(first_keep=first_keep, text=text, facts=facts, lang=lang, length=length):
                names, copy = self.cut_copy(lang, text, facts, rng.randrange(first_keep, length - 7))
                return names, lambda title, content: (title, copy)
            self.add_copies(time, original, lang, "cut", copies, cut_ops)
            if twin is not None:
                _, copy = self.cut_copy(lang, twin, facts, rng.randrange(first_keep, length - 7))
                self.add(time + self.copy_delay(), "", copy, self.new_story(), "short", lang,
                         "negative:opposite", "neg:cut:%s:opposite:short" % lang)
            if lang == "en" and letters_in(headline) >= 30 and self.guard.admit(headline):
                self.add_byline_group(headline)
            if rng.random() < 0.3:
                self.add_shared_opening(text, lang, length)

    def add_byline_group(self, headline):
        rng = self.rng
        time = self.arrival()
        original = self.add(time, "", headline, self.new_story(), "short", "en", "original", "pos:byline:en")
        writers = [en_full_name(rng, self.pool).upper() for _ in range(rng.choice([1, 1, 2]))]
        copy = headline.rstrip(".") + " by " + " and ".join(writers)
        self.add(time + self.copy_delay(), "", copy, original["story"], "short", "en", "byline", "copy:byline:en")

    def add_shared_opening(self, text, lang, length):
        """Another post that opens with `text`'s first 15 to 35 letters and
        goes on with its own, and its copy cut right after the shared
        opening: the cut copy is of the other post."""
        rng = self.rng
        other, _, _ = self.cut_post(lang)
        if other is None:
            return
        shared = rng.randrange(15, 36)
        opening = cut_after_letters(text, shared, rng, lang)
        if len(opening) >= len(text) or not text[len(opening)].isalnum():
            # Cut at a clause's end, the opening is a whole clause of `text`
            # too: not another post's.
            return
        skip = letters_in(opening)
        # The other post from its first clause after as many letters.
        start = len(cut_after_letters(other, skip, rng, lang))
        breaks = [other.find(mark, start) for mark in ("，", "。", ", ", " ")]
        breaks = [at for at in breaks if at >= 0]
        if not breaks or letters_in(other[min(breaks):]) < 20:
            return
        post = opening + ("，" if lang == "zh" else ", ") + other[min(breaks):].lstrip("，。, ")
        time = self.arrival()
        story = self.new_story()
        self.add(time, "", post, story, "short", lang, "original", "pos:opening:%s" % lang)
        tail = "..." if lang == "en" else "……"
        self.add(time + self.copy_delay(), "", opening + tail, story, "short", lang, "negative:opening",
                 "neg:cut:%s:opening:short" % lang)

    def build_set(self, kind):
        if kind == "names":
            self.add_name_groups()
        elif kind == "cuts":
            self.add_cuts()
        else:
            self.add_reposts()
        self.rows.sort(key=lambda row: (row[0], row[1]))
        return [(document, kind) for _, _, document, kind in self.rows]


# Copies here carry "trad" as an op (the bench's name), after the others,
# and "cut" (a platform's cut) and "byline" first.
if "trad" not in negsets.OP_ORDER:
    negsets.OP_ORDER.append("trad")
for name in ("byline", "cut"):
    if name not in negsets.OP_ORDER:
        negsets.OP_ORDER.insert(0, name)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser("generate", help="write negsets.jsonl and negsets.kinds.tsv into OUTDIR")
    generate.add_argument("kind", choices=["names", "reposts", "cuts"])
    generate.add_argument("out_dir")
    generate.add_argument("--pool", choices=sorted(POOLS), default="tune")
    generate.add_argument("--seed", type=int, default=None,
                          help="default: %s" % ", ".join("%d (%s)" % (seed, pool) for pool, seed in sorted(DEFAULT_SEEDS.items())))
    generate.add_argument("--scale", type=float, default=1.0)
    arguments = parser.parse_args(argv)
    seed = DEFAULT_SEEDS[arguments.pool] if arguments.seed is None else arguments.seed
    rows = SwapSetBuilder(seed, arguments.scale, arguments.pool).build_set(arguments.kind)
    set_path, _ = write_set(arguments.out_dir, rows)
    print(summary(rows), file=sys.stderr)
    print(set_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
